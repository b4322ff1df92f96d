import { postA2a } from '../support/a2a-rpc';
import { randomUUID } from 'node:crypto';
import { accepts, useAgentServer, type AgentBehaviour, type AgentReply } from '../support/agent-server';
import { agentRegistration, registerAgent, type RegisteredAgent } from '../support/agents';
import { useTestDatabase } from '../support/database';
import { gate } from '../support/gate';
import { call, expectError, type Reply } from '../support/http';
import { startTask, tool, waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { until } from '../support/until';

/** MAX_TASK_DEPTH as the test service runs it: the default. */
const MAX_TASK_DEPTH = 8;
/** Where the loop agent stops by itself, so that a service without a depth limit is not flooded for good. */
const LOOP_SAFETY_STOP = 30;
const LINEAGE = 'acs-task-lineage';

interface LoopAgent {
  agent: RegisteredAgent;
  /** The answers of the service to the agent's own POST /tasks, in order. */
  posts: Reply[];
}

describe('tasks started on behalf of other tasks', () => {
  const agents = useAgentServer();
  const database = useTestDatabase();

  const tasksOf = (agentId: string) => database().collection('tasks').find({ agentId }).toArray();

  /**
   * An `acs` agent that, for every task it is called for, starts a task of its own with its own key,
   * passing on the lineage header it got, and answers 202 once the service answered it (or, refused,
   * fails the task with the refusal). `holdAtHops` holds the call of the task at that depth until
   * `released` before it starts anything.
   */
  async function loopAgent(name: string, hold?: { atHops: number; released: Promise<void> }): Promise<LoopAgent> {
    const posts: Reply[] = [];
    let self: RegisteredAgent | undefined;
    const behaviour: AgentBehaviour = (received) => {
      if ((received.body as { cancel?: unknown }).cancel) return { status: 200, body: {} };
      if (posts.length >= LOOP_SAFETY_STOP) return { status: 200, body: { status: 'completed', result: {} } };
      const lineage = received.headers[LINEAGE] as string | undefined;
      const held = hold && lineage?.endsWith(`hops=${hold.atHops}`) ? hold.released : Promise.resolve();
      // Answered once the service answered the agent's own request: the reply is decided then.
      const reply: AgentReply = { status: 202, body: { status: 'received' } };
      reply.heldUntil = held
        .then(() =>
          call('POST', '/tasks', {
            apiKey: self!.apiKey,
            headers: lineage === undefined ? {} : { [LINEAGE]: lineage },
            body: { agentId: self!.agentId, operation: 'tools/echo', params: { text: 'again' } },
          }),
        )
        .then((answer) => {
          posts.push(answer);
          if (answer.status !== 202)
            Object.assign(reply, { status: 200, body: { status: 'failed', error: answer.body.error } });
        });
      return reply;
    };
    self = await registerAgent({ mcpUrl: agents().route(name, behaviour) });
    return { agent: self, posts };
  }

  it('ends an agent that calls itself at MAX_TASK_DEPTH hops below the root, refusing the next with 422 TASK_DEPTH_EXCEEDED', async () => {
    const { agent, posts } = await loopAgent('loop-to-depth');
    const rootTaskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'go' } });
    const refused = await until(() => posts.find((answer) => answer.status !== 202), 'the loop refused');
    expect(expectError(refused, 422, 'TASK_DEPTH_EXCEEDED')).toMatchObject({
      message: expect.stringContaining(`at most ${MAX_TASK_DEPTH} (MAX_TASK_DEPTH)`),
      details: { rootTaskId, hops: MAX_TASK_DEPTH + 1, maxTaskDepth: MAX_TASK_DEPTH },
    });

    // The root and one task on each hop below it, each the child of the one above.
    const stored = await tasksOf(agent.agentId);
    expect(stored).toHaveLength(MAX_TASK_DEPTH + 1);
    const byHops = new Map(stored.map((task) => [task.hops ?? 0, task]));
    expect([...byHops.keys()].sort((a, b) => a - b)).toEqual([...Array(MAX_TASK_DEPTH + 1).keys()]);
    for (let hops = 1; hops <= MAX_TASK_DEPTH; hops += 1) {
      expect(byHops.get(hops)).toMatchObject({ parentTaskId: byHops.get(hops - 1)!._id, rootTaskId });
    }
    // The calls named the task they were made for; the deepest task failed with the refusal its agent got.
    const deepest = byHops.get(MAX_TASK_DEPTH)!;
    expect(agents().callsTo('loop-to-depth')[0].headers[LINEAGE]).toBe(
      `parent=${rootTaskId}; root=${rootTaskId}; hops=0`,
    );
    expect(await waitForTask(deepest._id as unknown as string)).toMatchObject({
      status: 'failed',
      parentTaskId: byHops.get(MAX_TASK_DEPTH - 1)!._id,
      rootTaskId,
      hops: MAX_TASK_DEPTH,
      error: { code: 'TASK_DEPTH_EXCEEDED' },
    });
    expect(await tasksOf(agent.agentId)).toHaveLength(MAX_TASK_DEPTH + 1);
  });

  it('cancels the tasks started under a task when it is cancelled, and starts none on behalf of a cancelled one', async () => {
    const release = gate();
    const { agent, posts } = await loopAgent('loop-cancelled', { atHops: 2, released: release.opened });
    const rootTaskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'go' } });
    // The root and its child took their calls; the grandchild's call is held before it starts anything.
    await until(() => agents().callsTo('loop-cancelled').length >= 3 && posts.length >= 2, 'two hops started');

    const cancelled = await call('POST', `/tasks/${rootTaskId}/cancel`, { apiKey: 'admin' });
    expect(cancelled.status).toBe(200);
    const stored = await tasksOf(agent.agentId);
    expect(stored).toHaveLength(3);
    expect(stored.map((task) => task.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);

    // The held call goes on: the service starts nothing more on behalf of its cancelled task.
    release.open();
    const refused = await until(() => posts[2], "the held call's request answered");
    expect(expectError(refused, 409, 'CONFLICT').message).toMatch(/was cancelled/);
    expect(await tasksOf(agent.agentId)).toHaveLength(3);
  });

  it("links a task only to a parent its creator may name: a forged header counts hops, and the parent's cancel leaves it alone", async () => {
    const agent = await registerAgent({
      mcpUrl: agents().route('lineage-accepts', accepts),
      capabilities: { tools: [tool('wait')] },
    });
    const victimTaskId = await startTask({ agentId: agent.agentId, operation: 'tools/wait', params: {} });
    const stranger = (await call('POST', '/keys', { apiKey: 'admin', body: {} })).body.apiKey as string;

    const forged = await call('POST', '/tasks', {
      apiKey: stranger,
      headers: { [LINEAGE]: `parent=${victimTaskId}; root=${victimTaskId}; hops=2` },
      body: { agentId: agent.agentId, operation: 'tools/wait', params: {} },
    });
    expect(forged.status).toBe(202);
    const view = (await call('GET', `/tasks/${forged.body.taskId}`, { apiKey: stranger })).body;
    expect(view).toMatchObject({ rootTaskId: victimTaskId, hops: 3 });
    expect(view.parentTaskId).toBeUndefined();

    // An unknown parent reads the same; past the depth it is refused all the same.
    const unknown = randomUUID();
    const elsewhere = await call('POST', '/tasks', {
      apiKey: stranger,
      headers: { [LINEAGE]: `parent=${unknown}; root=${unknown}; hops=${MAX_TASK_DEPTH}` },
      body: { agentId: agent.agentId, operation: 'tools/wait', params: {} },
    });
    expectError(elsewhere, 422, 'TASK_DEPTH_EXCEEDED');

    expect((await call('POST', `/tasks/${victimTaskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
    expect((await call('GET', `/tasks/${forged.body.taskId}`, { apiKey: stranger })).body.status).toBe('pending');
    expect((await call('POST', `/tasks/${forged.body.taskId}/cancel`, { apiKey: stranger })).status).toBe(200);
  });

  it('refuses a lineage header that does not parse with 400, on POST /tasks and POST /tasks/compose alike', async () => {
    const agent = await registerAgent();
    const body = { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' } };
    for (const header of [
      'parent=a; root=b',
      'parent=a; root=b; hops=-1',
      'parent=a b; root=b; hops=1',
      'nonsense',
      'parent=a; root=b; hops=1; extra=2',
    ]) {
      expectError(
        await call('POST', '/tasks', { apiKey: 'admin', headers: { [LINEAGE]: header }, body }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await call('POST', '/tasks/compose', { apiKey: 'admin', headers: { [LINEAGE]: header }, body: [body] }),
        400,
        'VALIDATION_ERROR',
      );
    }
  });

  it('starts each task of a composition on behalf of the task its header names', async () => {
    const agent = await registerAgent({
      mcpUrl: agents().route('lineage-composed', accepts),
      capabilities: { tools: [tool('wait')] },
    });
    const rootTaskId = await startTask({ agentId: agent.agentId, operation: 'tools/wait', params: {} });
    const composed = await call('POST', '/tasks/compose', {
      apiKey: 'admin',
      headers: { [LINEAGE]: `parent=${rootTaskId}; root=${rootTaskId}; hops=0` },
      body: [
        { agentId: agent.agentId, operation: 'tools/wait', params: {} },
        { agentId: agent.agentId, operation: 'tools/wait', params: {}, parents: ['0'] },
      ],
    });
    expect(composed.status).toBe(202);
    for (const { taskId } of composed.body as Array<{ taskId: string }>) {
      expect((await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body).toMatchObject({
        parentTaskId: rootTaskId,
        rootTaskId,
        hops: 1,
      });
    }
    expect((await call('POST', `/tasks/${rootTaskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
    for (const { taskId } of composed.body as Array<{ taskId: string }>)
      expect((await waitForTask(taskId)).status).toMatch(/cancelled|failed/);
  });

  describe('over A2A', () => {
    const sendMessage = (agentId: string, lineage: string) =>
      postA2a(`/a2a/${agentId}`, {
        apiKey: 'admin',
        headers: { [LINEAGE]: lineage },
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: {
            message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ data: { skill: 'wait', params: {} } }] },
            configuration: { returnImmediately: true },
          },
        },
      });

    it('starts the task of a SendMessage on behalf of the task its header names', async () => {
      const agent = await registerAgent({
        mcpUrl: agents().route('lineage-a2a', accepts),
        capabilities: { tools: [tool('wait')] },
      });
      const rootTaskId = await startTask({ agentId: agent.agentId, operation: 'tools/wait', params: {} });
      const sent = await sendMessage(agent.agentId, `parent=${rootTaskId}; root=${rootTaskId}; hops=0`);
      expect(sent.status).toBe(200);
      const taskId = sent.body.result.task.id as string;
      expect((await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body).toMatchObject({
        parentTaskId: rootTaskId,
        rootTaskId,
        hops: 1,
      });
      // The call to the agent names the new task, one hop further down.
      await until(
        () =>
          agents()
            .callsTo('lineage-a2a')
            .find((received) => received.body.taskId === taskId),
        'the call',
      );
      const received = agents()
        .callsTo('lineage-a2a')
        .find((call) => call.body.taskId === taskId)!;
      expect(received.headers[LINEAGE]).toBe(`parent=${taskId}; root=${rootTaskId}; hops=1`);
      expect((await call('POST', `/tasks/${rootTaskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
      expect((await waitForTask(taskId)).status).toBe('cancelled');
    });

    it('answers JSON-RPC errors: -32050 past MAX_TASK_DEPTH, -32600 for a header that does not parse', async () => {
      const agent = await registerAgent({
        mcpUrl: agents().route('lineage-a2a-deep', accepts),
        capabilities: { tools: [tool('wait')] },
      });
      const parent = randomUUID();
      const deep = await sendMessage(agent.agentId, `parent=${parent}; root=${parent}; hops=${MAX_TASK_DEPTH}`);
      expect(deep.status).toBe(200);
      expect(deep.body.error).toMatchObject({
        code: -32050,
        data: [
          { reason: 'TASK_DEPTH_EXCEEDED', domain: 'agent-coordination-service.dev' },
          { '@type': 'type.googleapis.com/google.protobuf.Value', value: { hops: MAX_TASK_DEPTH + 1 } },
        ],
      });
      const garbled = await sendMessage(agent.agentId, 'hops=many');
      expect(garbled.body.error).toMatchObject({ code: -32600 });
      expect(await tasksOf(agent.agentId)).toHaveLength(0);
    });
  });
});

describe("an agent whose endpoint is this service's own", () => {
  const refusedRegistration = async (overrides: Record<string, unknown>) => {
    const reply = await call('POST', '/agents', { apiKey: 'admin', body: agentRegistration(overrides) });
    return expectError(reply, 400, 'VALIDATION_ERROR');
  };

  it('is refused at registration and on change: its /a2a/ or /mcp endpoint, or any path on its own port, however spelt', async () => {
    const { baseUrl: own } = testStack();
    const port = new URL(own).port;
    const someAgent = await registerAgent();
    for (const mcpUrl of [
      `${own}/a2a/${someAgent.agentId}`,
      `http://localhost:${port}/a2a/${someAgent.agentId}`,
      `http://127.1:${port}/A2A/${someAgent.agentId}`,
      `http://[::1]:${port}/a2a/${someAgent.agentId}`,
      `http://0.0.0.0:${port}/tasks`,
    ]) {
      expect(await refusedRegistration({ protocol: 'a2a', mcpUrl })).toMatchObject({
        message: expect.stringContaining('leads back to this service'),
        details: [{ path: '/mcpUrl', message: 'must not be this service itself' }],
      });
    }
    expect(await refusedRegistration({ protocol: 'mcp', mcpUrl: `${own}/mcp` })).toMatchObject({
      details: [{ path: '/mcpUrl' }],
    });
    // Its own card leads to its own endpoint.
    await refusedRegistration({
      protocol: 'a2a',
      mcpUrl: `${own}/agents/${someAgent.agentId}/.well-known/agent-card.json`,
      capabilities: undefined,
    });
    const changed = await call('PATCH', `/agents/${someAgent.agentId}`, {
      apiKey: 'admin',
      body: { protocol: 'a2a', mcpUrl: `${own}/a2a/${someAgent.agentId}` },
    });
    expectError(changed, 400, 'VALIDATION_ERROR');
    expect((await call('GET', `/agents/${someAgent.agentId}`, { apiKey: 'admin' })).body.mcpUrl).toBe(someAgent.mcpUrl);
  });
});
