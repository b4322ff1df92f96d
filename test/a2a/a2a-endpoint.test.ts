import { randomUUID } from 'node:crypto';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { Role, TaskState, type Part, type Task } from '@a2a-js/sdk';
import { acceptsAndHearsCancel, completes, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { tool } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { until } from '../support/until';

/** The A2A SDK's own client for an agent of the registry, found through its card, calling with the admin key. */
async function a2aClientFor(agentId: string) {
  const { baseUrl, adminKey } = testStack();
  const fetchImpl: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'x-api-key': adminKey } });
  const card = await new DefaultAgentCardResolver({ fetchImpl }).resolve(`${baseUrl}/agents/${agentId}/`);
  return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromAgentCard(card);
}

/** A data part, as the SDK's types have it. */
const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

const message = (parts: Part[]) => ({
  messageId: randomUUID(),
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

describe('the A2A JSON-RPC endpoint of an agent', () => {
  const server = useAgentServer();

  it('runs a SendMessage as a task of the agent, and answers GetTask with its result, through the A2A SDK', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('a2a-echo', (received) =>
        completes({ echoed: (received.body as { params: unknown }).params })(received),
      ),
      capabilities: { tools: [tool('echo', { text: { type: 'string' } })] },
    });
    const client = await a2aClientFor(agent.agentId);
    const sent = (await client.sendMessage({
      tenant: '',
      message: message([dataPart({ skill: 'echo', params: { text: 'hi' } })]),
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    expect(sent.id).toEqual(expect.any(String));
    const done = await until(async () => {
      const task = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
      return task.status?.state === TaskState.TASK_STATE_COMPLETED && task;
    }, 'the task completed');
    expect(done.artifacts[0].parts[0].content).toEqual({ $case: 'data', value: { echoed: { text: 'hi' } } });
    // The same task, as the service's own API shows it.
    expect((await call('GET', `/tasks/${sent.id}`, { apiKey: 'admin' })).body).toMatchObject({
      status: 'completed',
      agentId: agent.agentId,
      operation: 'tools/echo',
    });
  });

  it('answers a message sent again, whatever its messageId holds, with the task the first sending started', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('a2a-once', completes({})) });
    const send = (text: string) =>
      call('POST', `/a2a/${agent.agentId}`, {
        apiKey: 'admin',
        body: {
          jsonrpc: '2.0',
          id: text,
          method: 'SendMessage',
          params: { message: { messageId: 'message one, ünïcode', role: 'ROLE_USER', parts: [{ text }] } },
        },
      });
    const first = await send('once');
    const again = await send('once');
    expect(first.body.result.task.id).toEqual(expect.any(String));
    expect(again.body.result.task.id).toBe(first.body.result.task.id);
    expect(server().callsTo('a2a-once').length).toBeLessThanOrEqual(1);
  });

  it('cancels a task the agent is working on, and answers -32002 for one that already ended', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('a2a-slow', acceptsAndHearsCancel),
      capabilities: { tools: [tool('wait')] },
    });
    const client = await a2aClientFor(agent.agentId);
    const sent = (await client.sendMessage({
      tenant: '',
      message: message([dataPart({ params: {} })]),
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    await until(async () => {
      const task = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
      return task.status?.state === TaskState.TASK_STATE_WORKING;
    }, 'the agent working on it');
    const cancelled = await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const again = await call('POST', `/a2a/${agent.agentId}`, {
      apiKey: 'admin',
      body: { jsonrpc: '2.0', id: 2, method: 'CancelTask', params: { id: sent.id } },
    });
    expect(again.body).toMatchObject({ id: 2, error: { code: -32002 } });
  });

  it("answers the spec's errors: unknown task, unsupported method, another major version", async () => {
    const agent = await registerAgent();
    const rpc = (method: string, params: unknown, headers: Record<string, string> = {}) =>
      call('POST', `/a2a/${agent.agentId}`, {
        apiKey: 'admin',
        headers,
        body: { jsonrpc: '2.0', id: 7, method, params },
      });
    expect((await rpc('GetTask', { id: 'no-such-task' })).body).toMatchObject({ id: 7, error: { code: -32001 } });
    expect((await rpc('ListTasks', {})).body).toMatchObject({ error: { code: -32004 } });
    expect((await rpc('tasks/nothing', {})).body).toMatchObject({ error: { code: -32601 } });
    expect((await rpc('GetTask', { id: 'x' }, { 'a2a-version': '2.0' })).body).toMatchObject({
      error: { code: -32009 },
    });
    expect((await call('POST', `/a2a/${agent.agentId}`, { apiKey: 'admin', body: { id: 1 } })).body).toMatchObject({
      error: { code: -32600 },
    });
  });
});
