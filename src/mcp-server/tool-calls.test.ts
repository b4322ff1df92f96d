import { ErrorCode as McpErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { ADMIN_PRINCIPAL } from '../auth/principal';
import { ApiError, ErrorCode } from '../http/errors';
import type { TaskEvent } from '../task-events/task-event';
import type { McpSession } from './server-sessions';
import type { CatalogTool } from './tool-catalog';
import { callTool, type CallContext, type ToolCallDeps } from './tool-calls';

const named = { name: 'Bot.echo', agentId: 'a1', tool: { name: 'echo' }, agent: {} } as unknown as CatalogTool;
const session: McpSession = {
  sessionId: 's1',
  principal: ADMIN_PRINCIPAL,
  capabilities: {},
  protocolVersion: '2025-11-25',
};

function context(fields: Partial<CallContext> = {}): CallContext {
  return {
    principal: ADMIN_PRINCIPAL,
    session,
    requestId: 7,
    progressToken: undefined,
    signal: new AbortController().signal,
    notify: async () => undefined,
    ask: async () => undefined,
    at: () => undefined,
    ...fields,
  };
}

describe('a tools/call of a session', () => {
  it('keeps the call in its session, once the task started: its one write', async () => {
    const writes: string[] = [];
    const deps: ToolCallDeps = {
      launcher: {
        launchTask: async () => {
          writes.push('task');
          return 't1';
        },
      },
      sessions: {
        recordCall: async (sessionId, requestId, call) =>
          void writes.push(`call ${sessionId}/${requestId} ${call.taskId}`),
      },
      feeds: {
        subscribe: (_source, subscriber) => {
          const ended = { seq: 3, taskId: 't1', type: 'completed', at: '', result: { ok: true } } as TaskEvent;
          setImmediate(() => subscriber.deliver([ended]));
          return () => undefined;
        },
      },
    };
    await expect(callTool(deps, named, { text: 'hi' }, context())).resolves.toMatchObject({
      structuredContent: { ok: true },
    });
    expect(writes).toEqual(['task', 'call s1/7 t1']);
  });
});

describe('a tools/call of an agent gone since the catalog was read', () => {
  it('is an unknown tool, as in a catalog read now', async () => {
    const deps: ToolCallDeps = {
      launcher: {
        launchTask: async () => {
          throw new ApiError(ErrorCode.AGENT_NOT_FOUND, 'Agent a1 not found');
        },
      },
      sessions: { recordCall: async () => undefined },
      feeds: { subscribe: () => () => undefined },
    };
    await expect(callTool(deps, named, {}, context())).rejects.toMatchObject({
      code: McpErrorCode.InvalidParams,
      message: expect.stringContaining('Unknown tool: Bot.echo'),
    });
  });
});
