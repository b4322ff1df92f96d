import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { TaskElicitation } from '../../activities/mcp-elicitation';
import { PrincipalKind } from '../../src/auth/principal';
import { Store } from '../../src/store/mongo';
import { TaskChanges } from '../../src/tasks/task-changes';
import { TaskClaims } from '../../src/tasks/task-claims';
import { TaskStore } from '../../src/tasks/task-store';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { EventStreamReader } from '../support/event-stream';
import { call, expectError } from '../support/http';
import { registerTaskTool, useMcpServer } from '../support/mcp-server';
import { startTask, waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { createMetrics } from '../../src/ops/metrics';
import { CheckPool } from '../../src/user-schemas/check-pool';

/** Schema checks off the event loop, as the service makes them: one pool for the file. */
const schemas = new CheckPool({ threads: 1, timeoutMs: 10_000 });
afterAll(() => schemas.close());

const CONFIRMATION = {
  type: 'object' as const,
  properties: { confirm: { type: 'boolean' as const } },
  required: ['confirm'],
};

/** A tool that asks its client to confirm through elicitation before it acts, in the call's own response stream. */
function tools(server: McpServer): void {
  server.registerTool(
    'delete',
    { description: 'Deletes after confirmation', inputSchema: { what: z.string() } },
    async ({ what }, extra) => {
      const answer = await extra.sendRequest(
        { method: 'elicitation/create', params: { message: `Delete ${what}?`, requestedSchema: CONFIRMATION } },
        ElicitResultSchema,
      );
      const confirmed = answer.action === 'accept' && answer.content?.confirm === true;
      return { content: [{ type: 'text', text: confirmed ? `deleted ${what}` : `kept ${what} (${answer.action})` }] };
    },
  );
  server.registerTool('connect', { description: 'Connects an account after consent at its page' }, async (extra) => {
    const answer = await extra.sendRequest(
      {
        method: 'elicitation/create',
        params: { mode: 'url', message: 'Allow access to your calendar', url: CONSENT_URL, elicitationId: 'consent-1' },
      },
      ElicitResultSchema,
    );
    return { content: [{ type: 'text', text: `consent: ${answer.action}` }] };
  });
  // An MCP task that asks for confirmation: the request waits in the task's queue until tasks/result.
  registerTaskTool(server, 'purge', { what: z.string() }, (taskId, store, { what }) => {
    void (async () => {
      await store.updateTaskStatus(taskId, 'input_required');
      const answer = await server.server.request(
        { method: 'elicitation/create', params: { message: `Purge ${what}?`, requestedSchema: CONFIRMATION } },
        ElicitResultSchema,
        { relatedTask: { taskId }, timeout: 120_000 },
      );
      await store.updateTaskStatus(taskId, 'working');
      const confirmed = answer.action === 'accept' && answer.content?.confirm === true;
      await store.storeTaskResult(taskId, 'completed', {
        content: [{ type: 'text', text: confirmed ? `purged ${what}` : `kept ${what} (${answer.action})` }],
      });
    })().catch(() => undefined); // A session closed before the answer ends the request: the test tells.
  });
}

const CONSENT_URL = 'https://calendar.example/consent?client=acs';

/** A person's answer to the task's open input request. */
const giveInput = (taskId: string, input: unknown) =>
  call('POST', `/tasks/${taskId}/input`, { apiKey: 'admin', body: { input } });

describe('an MCP agent that asks for input through elicitation', () => {
  const mcp = useMcpServer({ setup: tools });
  let agent: RegisteredAgent;

  beforeAll(async () => {
    agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
  });

  it('makes the task input-required while the call waits, and answers the server with the checked input', async () => {
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/delete', params: { what: 'the logs' } });
    const stream = await EventStreamReader.open(`/tasks/${taskId}/events`);
    const waiting = await waitForTask(taskId, { until: (task) => task.status === 'input-required' });
    expect(waiting).toMatchObject({
      status: 'input-required',
      inputRequest: { message: 'Delete the logs?', inputSchema: CONFIRMATION },
    });
    expectError(await giveInput(taskId, { confirm: 'yes' }), 400, 'VALIDATION_ERROR');
    const answered = await giveInput(taskId, { confirm: true });
    expect(answered.status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'deleted the logs' }] },
    });
    await stream.closed;
    expect(stream.data.map((event) => event.type)).toEqual([
      'created',
      'started',
      'input_required',
      'input_received',
      'completed',
    ]);
  });

  it('gives each of two calls sharing the kept session the answer to its own request', async () => {
    const [first, second] = await Promise.all(
      ['the cache', 'the backups'].map((what) =>
        startTask({ agentId: agent.agentId, operation: 'tools/delete', params: { what } }),
      ),
    );
    for (const taskId of [first, second])
      await waitForTask(taskId, { until: (task) => task.status === 'input-required' });
    const answer = (taskId: string, confirm: boolean) => giveInput(taskId, { confirm });
    expect((await answer(second, false)).status).toBe(200);
    expect((await answer(first, true)).status).toBe(200);
    expect((await waitForTask(first)).result).toEqual({ content: [{ type: 'text', text: 'deleted the cache' }] });
    expect((await waitForTask(second)).result).toEqual({
      content: [{ type: 'text', text: 'kept the backups (accept)' }],
    });
    // One session served both: the calls were not given sessions of their own.
    expect(
      new Set(
        mcp()
          .requests.filter((request) => request.toolName === 'delete')
          .map((request) => request.headers['mcp-session-id']),
      ).size,
    ).toBe(1);
  });

  it('relays an elicitation of an MCP task, read with tasks/result, and the task ends with its result', async () => {
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/purge', params: { what: 'the queue' } });
    const waiting = await waitForTask(taskId, { until: (task) => task.status === 'input-required' });
    expect(waiting).toMatchObject({
      status: 'input-required',
      inputRequest: { message: 'Purge the queue?', inputSchema: CONFIRMATION },
    });
    expect(mcp().callsOf('tasks/result').length).toBeGreaterThan(0);
    const answered = await giveInput(taskId, { confirm: true });
    expect(answered.status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'purged the queue' }] },
    });
  });

  it('relays a URL-mode elicitation with its url, and gives the server the action the person confirmed', async () => {
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/connect', params: {} });
    const stream = await EventStreamReader.open(`/tasks/${taskId}/events`);
    const waiting = await waitForTask(taskId, { until: (task) => task.status === 'input-required' });
    expect(waiting.inputRequest).toMatchObject({
      message: 'Allow access to your calendar',
      url: CONSENT_URL,
      inputSchema: { required: ['action'] },
    });
    expectError(await giveInput(taskId, { action: 'maybe' }), 400, 'VALIDATION_ERROR');
    const answered = await giveInput(taskId, { action: 'accept' });
    expect(answered.status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'consent: accept' }] },
    });
    await stream.closed;
    expect(stream.data.find((event) => event.type === 'input_required')).toMatchObject({ url: CONSENT_URL });
  });

  it('tells the server cancel when no one answered before the call would time out, and the task is pending again', async () => {
    const store = await Store.connect(testStack().mongoUri, testStack().mongoDatabase);
    try {
      const taskStore = new TaskStore(store, new TaskChanges({ workerInProcess: true }), createMetrics());
      const taskId = randomUUID();
      await taskStore.create({ kind: PrincipalKind.ADMIN, id: 'admin' }, [
        { _id: taskId, agentId: agent.agentId, operation: 'tools/delete', params: {}, phase: 'calling_agent' },
      ]);
      const elicitation = new TaskElicitation(
        taskStore,
        new TaskClaims(store),
        schemas,
        { taskId },
        { deadline: Date.now() + 1_600, signal: new AbortController().signal, phase: 'calling_agent' },
      );
      expect(await elicitation.answer('Delete?', { ...CONFIRMATION })).toEqual({ action: 'cancel' });
      const task = await taskStore.find(taskId);
      expect(task).toMatchObject({ status: 'pending', phase: 'calling_agent', inputRequests: 1 });
      expect(task).not.toHaveProperty('inputRequest');
      expect(await elicitation.answer('Again?', { type: 'object', properties: { x: { type: 'nonsense' } } })).toEqual({
        action: 'decline',
      });
    } finally {
      await store.close();
    }
  });
});
