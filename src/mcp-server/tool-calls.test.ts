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
  it('keeps the call in its session once the task started: its one write', async () => {
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

describe('a tools/call whose record is still being written', () => {
  /** Deps whose task sends a progress event and ends at once, while its call's record waits for `recorded`. */
  function slowRecord(recorded: Promise<void>) {
    const deps: ToolCallDeps = {
      launcher: { launchTask: async () => 't1' },
      sessions: { recordCall: () => recorded },
      feeds: {
        subscribe: (_source, subscriber) => {
          const progress = { seq: 2, taskId: 't1', type: 'progress', at: '', progress: 0.5 } as TaskEvent;
          const ended = { seq: 3, taskId: 't1', type: 'completed', at: '', result: { ok: true } } as TaskEvent;
          subscriber.deliver([progress, ended]);
          return () => undefined;
        },
      },
    };
    return deps;
  }

  it('sends nothing before the record, then each message with the seq of its own event', async () => {
    let record!: () => void;
    const recorded = new Promise<void>((resolve) => (record = resolve));
    const sent: string[] = [];
    let seq = 0;
    const call = callTool(
      slowRecord(recorded),
      named,
      {},
      context({
        progressToken: 'p',
        at: (at) => (seq = at),
        notify: async (notification) => void sent.push(`${notification.method} at ${seq}`),
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([]);
    expect(seq).toBe(0);
    record();
    await expect(call).resolves.toMatchObject({ structuredContent: { ok: true } });
    expect(sent).toEqual(['notifications/progress at 2']);
    expect(seq).toBe(3);
  });

  it('fails the call when the record cannot be written, though the task ended', async () => {
    const sent: string[] = [];
    const call = callTool(
      slowRecord(Promise.reject(new Error('store gone'))),
      named,
      {},
      context({ progressToken: 'p', notify: async (notification) => void sent.push(notification.method) }),
    );
    await expect(call).rejects.toThrow('store gone');
    expect(sent).toEqual([]);
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
