import { postA2a } from '../support/a2a-rpc';
import { randomUUID } from 'node:crypto';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { dataPart } from '../support/a2a-agent';
import { accepts, completes, useAgentServer } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call } from '../support/http';
import { reportOn } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { until } from '../support/until';

/** The A2A SDK's own client for an agent of the registry, found through its card, calling with `apiKey`. */
async function a2aClientFor(agentId: string, apiKey = testStack().adminKey): Promise<Client> {
  const { baseUrl } = testStack();
  const fetchImpl: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'x-api-key': apiKey } });
  const card = await new DefaultAgentCardResolver({ fetchImpl }).resolve(`${baseUrl}/agents/${agentId}/`);
  return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromAgentCard(card);
}

/** A SendMessage request of one data part in context `contextId` ('' for none), as the SDK's client takes it. */
const request = (value: unknown, contextId: string, returnImmediately = false) => ({
  tenant: '',
  message: {
    messageId: randomUUID(),
    contextId,
    taskId: '',
    role: Role.ROLE_USER,
    parts: [dataPart(value)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: returnImmediately
    ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately }
    : undefined,
  metadata: undefined,
});

const listRequest = (contextId: string) => ({
  tenant: '',
  contextId,
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageSize: 50,
  pageToken: '',
  historyLength: undefined,
  statusTimestampAfter: undefined,
  includeArtifacts: undefined,
});

/** One JSON-RPC call of `method` to the agent's endpoint, as it answered. */
const rpc = (agentId: string, method: string, params: unknown, apiKey = 'admin') =>
  postA2a(`/a2a/${agentId}`, { apiKey, body: { jsonrpc: '2.0', id: method, method, params } });

/** Waits until the agent took the task (202) and the service awaits its report. */
const taken = (taskId: string) =>
  until(
    async () => (await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body.phase === 'awaiting_agent_report',
    'the agent took it',
  );

/** The agent's input request for the task, as it reports one. */
const askColour = (taskId: string, agent: RegisteredAgent) =>
  reportOn(taskId, agent.apiKey, {
    status: 'input-required',
    message: 'Which colour?',
    inputSchema: { type: 'object', required: ['colour'], properties: { colour: { type: 'string' } } },
  });

describe('A2A contexts at the JSON-RPC endpoint', () => {
  const server = useAgentServer();

  it("keeps a client's contextId: its tasks share it, in SendMessage, GetTask and streams; one is generated otherwise", async () => {
    const agent = await registerAgent({ mcpUrl: server().route('ctx-kept', completes({ done: true })) });
    const client = await a2aClientFor(agent.agentId);
    const contextId = randomUUID();
    const first = (await client.sendMessage(request({ params: { text: 'one' } }, contextId))) as Task;
    const second = (await client.sendMessage(request({ params: { text: 'two' } }, contextId))) as Task;
    expect([first.contextId, second.contextId]).toEqual([contextId, contextId]);
    expect(second.id).not.toBe(first.id);
    const read = await client.getTask({ tenant: '', id: first.id, historyLength: undefined });
    expect(read.contextId).toBe(contextId);

    const streamed = [];
    for await (const event of client.sendMessageStream(request({ params: { text: 'three' } }, contextId)))
      streamed.push(event.payload);
    expect(streamed.length).toBeGreaterThan(1);
    for (const payload of streamed) expect(payload?.value).toMatchObject({ contextId });

    // Without one, the service generates a context: a new one, named in the answer.
    const alone = (await client.sendMessage(request({ params: { text: 'alone' } }, ''))) as Task;
    expect(alone.contextId).toEqual(expect.any(String));
    expect(alone.contextId).not.toBe('');
    expect(alone.contextId).not.toBe(contextId);
  });

  it("lists a context's tasks, newest first, and only the caller's own", async () => {
    const agent = await registerAgent({ mcpUrl: server().route('ctx-listed', completes({ done: true })) });
    const [alice, bob] = [await registerAgent(), await registerAgent()];
    const asAlice = await a2aClientFor(agent.agentId, alice.apiKey);
    const asBob = await a2aClientFor(agent.agentId, bob.apiKey);
    const contextId = randomUUID();
    const sent: string[] = [];
    for (const text of ['one', 'two'])
      sent.push(((await asAlice.sendMessage(request({ params: { text } }, contextId))) as Task).id);
    await asAlice.sendMessage(request({ params: { text: 'elsewhere' } }, randomUUID()));
    // Another caller with the same contextId has a context of its own.
    const bobs = (await asBob.sendMessage(request({ params: { text: 'bob' } }, contextId))) as Task;

    const listed = await asAlice.listTasks(listRequest(contextId));
    expect(listed.tasks.map((task) => task.id)).toEqual([sent[1], sent[0]]);
    expect(listed.totalSize).toBe(2);
    expect(listed.tasks.every((task) => task.contextId === contextId)).toBe(true);
    expect((await asBob.listTasks(listRequest(contextId))).tasks.map((task) => task.id)).toEqual([bobs.id]);
  });

  it('answers the input request of the context’s last task with a message in that context', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('ctx-asks', accepts) });
    const other = await registerAgent();
    const client = await a2aClientFor(agent.agentId);
    const contextId = randomUUID();
    const started = request({ params: { text: 'ask me' } }, contextId, true);
    const asked = (await client.sendMessage(started)) as Task;
    await taken(asked.id);
    expect((await askColour(asked.id, agent)).status).toBe(200);

    // The first message sent again answers with its task, as any repeat does: it answers no input request.
    const repeated = (await client.sendMessage(started)) as Task;
    expect(repeated).toMatchObject({ id: asked.id, status: { state: TaskState.TASK_STATE_INPUT_REQUIRED } });
    // Another caller's message in a context of the same name reaches none of this caller's tasks.
    const elsewhere = await rpc(
      agent.agentId,
      'SendMessage',
      {
        message: {
          messageId: randomUUID(),
          contextId,
          role: 'ROLE_USER',
          parts: [{ data: { params: { text: 'x' } } }],
        },
        configuration: { returnImmediately: true },
      },
      other.apiKey,
    );
    expect(elsewhere.body.result.task.id).not.toBe(asked.id);
    // A contextId that is not the named task's is refused.
    const mismatched = await rpc(agent.agentId, 'SendMessage', {
      message: {
        messageId: randomUUID(),
        taskId: asked.id,
        contextId: randomUUID(),
        role: 'ROLE_USER',
        parts: [{ data: { colour: 'blue' } }],
      },
    });
    expect(mismatched.body).toMatchObject({ error: { code: -32602 } });

    const answer = request({ colour: 'blue' }, contextId, true);
    const answered = (await client.sendMessage(answer)) as Task;
    expect(answered).toMatchObject({ id: asked.id, contextId, status: { state: TaskState.TASK_STATE_WORKING } });
    // Sent again, the answer answers with its task: it starts none.
    expect(((await client.sendMessage(answer)) as Task).id).toBe(asked.id);
    const inContext = (await client.listTasks(listRequest(contextId))).tasks.map((task) => task.id);
    expect(inContext.sort()).toEqual([asked.id, elsewhere.body.result.task.id].sort());
    const delivered = await until(
      () =>
        server()
          .callsTo('ctx-asks')
          .find((received) => (received.body as { input?: unknown }).input !== undefined),
      'the agent got the input',
    );
    expect(delivered.body).toMatchObject({ taskId: asked.id, input: { colour: 'blue' } });
    const inputs = server()
      .callsTo('ctx-asks')
      .filter((received) => (received.body as { input?: unknown }).input !== undefined);
    expect(inputs).toHaveLength(1);
    expect((await call('GET', `/tasks/${asked.id}`, { apiKey: 'admin' })).body.status).toBe('pending');
  });

  it('refuses a push notification config in SendMessage with -32003, and starts nothing', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('ctx-pushed', completes({})) });
    const client = await a2aClientFor(agent.agentId);
    const pushed = request({ params: { text: 'push' } }, '');
    const configuration = {
      acceptedOutputModes: [],
      historyLength: undefined,
      returnImmediately: false,
      taskPushNotificationConfig: {
        tenant: '',
        id: '',
        taskId: '',
        url: 'http://127.0.0.1:9/hook',
        token: 'secret',
        authentication: undefined,
      },
    };
    await expect(client.sendMessage({ ...pushed, configuration })).rejects.toMatchObject({
      name: 'PushNotificationNotSupportedError',
    });
    // A2A 0.3's name for it too, and in SendStreamingMessage.
    for (const method of ['SendMessage', 'SendStreamingMessage']) {
      const answered = await rpc(agent.agentId, method, {
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ data: { params: { text: 'push' } } }] },
        configuration: { pushNotificationConfig: { url: 'http://127.0.0.1:9/hook' } },
      });
      expect(answered.body).toMatchObject({ id: method, error: { code: -32003 } });
    }
    expect((await rpc(agent.agentId, 'ListTasks', {})).body.result.totalSize).toBe(0);
    expect(server().callsTo('ctx-pushed')).toEqual([]);
  });
});
