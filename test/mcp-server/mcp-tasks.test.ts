import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { accepts, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { newServiceKey } from '../support/keys';
import { listAllTools, useMcpClients } from '../support/mcp-clients';
import { useSecondApi } from '../support/second-api';
import { reportOn, tool, waitForTask } from '../support/tasks';
import { until } from '../support/until';

const META_TASK = 'dev.agent-coordination-service/taskId';
const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const INVALID_PARAMS = -32602;

describe('/mcp: MCP tasks (task-augmented tools/call, tasks/*)', () => {
  const server = useAgentServer();
  const second = useSecondApi('mcp-tasks');
  const mcpClient = useMcpClients();

  /** A private agent of a new service key, whose tool `work` takes the task and reports later; its tool's MCP name. */
  async function waitingAgent(route: string) {
    const owner = (await newServiceKey()).key;
    const name = `Tasked ${randomUUID().slice(0, 6)}`;
    const agent = await registerAgent(
      {
        name,
        mcpUrl: server().route(route, accepts),
        capabilities: { tools: [tool('work')] },
        visibility: 'private',
      },
      owner,
    );
    return { owner, agent, toolName: `${name.replace(' ', '_')}.work` };
  }

  /** A task-augmented tools/call: the CreateTaskResult. */
  const callAsTask = (client: Client, name: string, args: Record<string, unknown> = {}) =>
    client.request(
      { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );

  /** The JSON-RPC error code `promise` was refused with. */
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => 'answered',
      (error: { code?: number }) => error.code,
    );

  it('answers a task-augmented call with the task at once, and tasks/get, tasks/result and tasks/list follow it from any session and process', async () => {
    const { owner, agent, toolName } = await waitingAgent('mcp-tasked');
    const client = await mcpClient({ apiKey: owner });
    expect(client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const tools = await listAllTools(client);
    expect(tools.find((each) => each.name === toolName)?.execution).toEqual({ taskSupport: 'optional' });

    const { task } = await callAsTask(client, toolName);
    expect(task).toEqual({
      taskId: expect.any(String),
      status: 'working',
      createdAt: expect.any(String),
      lastUpdatedAt: expect.any(String),
      ttl: null,
      pollInterval: 1000,
    });
    // The handle came before the agent's report: the task is the one the agent was called for, still pending.
    const agentCall = await until(() => server().callsTo('mcp-tasked')[0]?.body, 'the call to the agent');
    expect(agentCall.taskId).toBe(task.taskId);
    const stored = await call('GET', `/tasks/${task.taskId}`, { apiKey: owner });
    expect(stored.body).toMatchObject({ status: 'pending', operation: 'tools/work', createdAt: task.createdAt });
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({
      taskId: task.taskId,
      status: 'working',
    });

    // Another session, on another API process, waits for the result.
    const other = await mcpClient({ apiKey: owner, baseUrl: second() });
    const result = other.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect((await reportOn(task.taskId, agent.apiKey, { status: 'completed', result: { done: 1 } })).status).toBe(200);
    expect(await result).toEqual({
      content: [{ type: 'text', text: '{"done":1}' }],
      structuredContent: { done: 1 },
      _meta: { [META_TASK]: task.taskId, [RELATED_TASK]: { taskId: task.taskId } },
    });
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'completed' });
    const listed = await other.experimental.tasks.listTasks();
    expect(listed.tasks).toContainEqual(expect.objectContaining({ taskId: task.taskId, status: 'completed' }));
    // A finished task's result stays: tasks/result answers it at once.
    expect(
      (await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).structuredContent,
    ).toEqual({ done: 1 });

    // Another caller neither reads, waits for, cancels nor lists it.
    const stranger = await mcpClient({ apiKey: (await newServiceKey()).key });
    expect(await refusal(stranger.experimental.tasks.getTask(task.taskId))).toBe(INVALID_PARAMS);
    expect(await refusal(stranger.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema))).toBe(
      INVALID_PARAMS,
    );
    expect(await refusal(stranger.experimental.tasks.cancelTask(task.taskId))).toBe(INVALID_PARAMS);
    expect((await stranger.experimental.tasks.listTasks()).tasks.map((each) => each.taskId)).not.toContain(task.taskId);
    expect(await refusal(client.experimental.tasks.getTask('no-such-task'))).toBe(INVALID_PARAMS);
    expect(await refusal(client.experimental.tasks.listTasks('not-a-cursor'))).toBe(INVALID_PARAMS);
  });

  it('cancels the task on tasks/cancel, as POST /tasks/{taskId}/cancel does', async () => {
    const { owner, toolName } = await waitingAgent('mcp-tasked-cancel');
    const client = await mcpClient({ apiKey: owner });
    const { task } = await callAsTask(client, toolName);
    await until(() => server().callsTo('mcp-tasked-cancel')[0], 'the call to the agent');
    expect(await client.experimental.tasks.cancelTask(task.taskId)).toMatchObject({
      taskId: task.taskId,
      status: 'cancelled',
    });
    expect((await call('GET', `/tasks/${task.taskId}`, { apiKey: owner })).body).toMatchObject({ status: 'cancelled' });
    expect(await refusal(client.experimental.tasks.cancelTask(task.taskId))).toBe(INVALID_PARAMS);
    expect(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: `CANCELLED: Task ${task.taskId} was cancelled` }],
    });
  });

  it("asks for a waiting task's input on the tasks/result stream, and the answer is the task's input", async () => {
    const { owner, agent, toolName } = await waitingAgent('mcp-tasked-input');
    const client = await mcpClient({ apiKey: owner, capabilities: { elicitation: { form: {} } } });
    const asked: ElicitRequest['params'][] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { colour: 'green' } };
    });
    const { task } = await callAsTask(client, toolName);
    await until(() => server().callsTo('mcp-tasked-input')[0], 'the call to the agent');
    const inputSchema = { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] };
    const report = { status: 'input-required', message: 'Which colour?', inputSchema };
    expect((await reportOn(task.taskId, agent.apiKey, report)).status).toBe(200);
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({
      status: 'input_required',
      statusMessage: 'Which colour?',
    });

    const result = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    await waitForTask(task.taskId, { apiKey: owner, until: (each) => each.status === 'pending' });
    expect(asked).toEqual([
      {
        mode: 'form',
        message: 'Which colour?',
        requestedSchema: inputSchema,
        _meta: { [RELATED_TASK]: { taskId: task.taskId } },
      },
    ]);
    const events = await call('GET', `/tasks/${task.taskId}/events?format=json`, { apiKey: owner });
    expect(events.body).toContainEqual(expect.objectContaining({ type: 'input_received', input: { colour: 'green' } }));
    expect((await reportOn(task.taskId, agent.apiKey, { status: 'completed', result: { painted: true } })).status).toBe(
      200,
    );
    expect((await result).structuredContent).toEqual({ painted: true });
  });

  it("refuses a task-augmented call whose arguments fail the tool, starting nothing, and one of the registry's own tools", async () => {
    const name = `Strict ${randomUUID().slice(0, 6)}`;
    await registerAgent({ name, capabilities: { tools: [tool('count', { n: { type: 'integer' } })] } });
    const client = await mcpClient();
    await expect(callAsTask(client, `${name.replace(' ', '_')}.count`, { n: 'x' })).rejects.toMatchObject({
      code: INVALID_PARAMS,
      message: expect.stringContaining('VALIDATION_ERROR: '),
    });
    expect(await refusal(callAsTask(client, 'search_agents', { query: 'x' }))).toBe(-32601);
  });
});
