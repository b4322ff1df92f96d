import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { callAgentActivity } from '../../activities/call-agent';
import { PrincipalKind } from '../../src/auth/principal';
import { RecentAgents } from '../../src/registry/recent-agents';
import { stackAgents } from '../support/database';
import { outboundDispatcher } from '../../src/agent-calls/outbound-guard';
import { TaskChanges } from '../../src/tasks/task-changes';
import { TaskClaims } from '../../src/tasks/task-claims';
import { TaskStore } from '../../src/tasks/task-store';
import { TaskPhase, TaskStatus } from '../../workflows/task-types';
import { Store } from '../../src/store/mongo';
import { useAgentServer, completes } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { testStack } from '../support/test-stack';
import { createMetrics } from '../../src/ops/metrics';
import { CheckPool } from '../../src/user-schemas/check-pool';
import { McpSessionPool } from '../../src/agent-calls/mcp-session-pool';

/** Schema checks off the event loop, as the service makes them: one pool for the file. */
const schemas = new CheckPool({ threads: 1, timeoutMs: 10_000 });
afterAll(() => schemas.close());
/** The worker's kept MCP sessions: none here, every agent of the file speaks acs. */
const sessions = new McpSessionPool({
  dispatcher: outboundDispatcher({ allowPrivate: true, connectTimeoutMs: 5_000 }),
  timeoutMs: 5_000,
  maxReplyBytes: 65_536,
  idleMs: 60_000,
});
afterAll(() => sessions.close());

/**
 * The call activity run by itself (Temporal's mock activity environment) against the test stack's
 * MongoDB: what one attempt writes to the task store, and what a retried attempt finds there.
 */
describe('one attempt of the call activity', () => {
  const server = useAgentServer();
  let agent: RegisteredAgent;
  let store: Store;
  let taskStore: TaskStore;
  let callAgent: ReturnType<typeof callAgentActivity>;

  beforeAll(async () => {
    agent = await registerAgent({ mcpUrl: server().route('answers', completes({ text: 'from the agent' })) });
    store = await Store.connect(testStack().mongoUri, testStack().mongoDatabase);
    taskStore = new TaskStore(store, new TaskChanges({ workerInProcess: true }), createMetrics());
    callAgent = callAgentActivity(
      new RecentAgents(stackAgents(store)),
      taskStore,
      new TaskClaims(store),
      schemas,
      outboundDispatcher({ allowPrivate: true, connectTimeoutMs: 5_000 }),
      sessions,
      { callTimeoutMs: 5_000, maxReplyBytes: 65_536 },
      createMetrics(),
    );
  });
  afterAll(async () => {
    await store.close();
  });

  async function pendingTask(): Promise<string> {
    const taskId = randomUUID();
    await taskStore.create({ kind: PrincipalKind.ADMIN, id: 'admin' }, [
      {
        _id: taskId,
        agentId: agent.agentId,
        operation: 'tools/echo',
        params: { text: 'x' },
        phase: TaskPhase.CALLING_AGENT,
      },
    ]);
    return taskId;
  }
  const input = (taskId: string, maxAttempts = 5) => ({
    taskId,
    agentId: agent.agentId,
    operation: 'tools/echo',
    params: { text: 'x' },
    maxAttempts,
  });

  it("records the agent's answer as the task's outcome itself, and leaves the result out of the workflow's history", async () => {
    const taskId = await pendingTask();
    expect(await new MockActivityEnvironment({ attempt: 1 }).run(callAgent, input(taskId))).toEqual({
      kind: 'completed',
      attempt: 1,
      recorded: true,
    });
    expect(await taskStore.find(taskId)).toMatchObject({
      status: TaskStatus.COMPLETED,
      result: JSON.stringify({ text: 'from the agent' }),
      attempts: 1,
    });
  });

  it('returns the result to a workflow that keeps it for a dependant', async () => {
    const taskId = await pendingTask();
    expect(
      await new MockActivityEnvironment({ attempt: 1 }).run(callAgent, { ...input(taskId), keepsResult: true }),
    ).toEqual({ kind: 'completed', result: { text: 'from the agent' }, attempt: 1, recorded: true });
  });

  it('returns the answer an earlier attempt recorded before it was lost, and does not call the agent again', async () => {
    const taskId = await pendingTask();
    await taskStore.updateUnconditionally(
      { taskId },
      {
        status: TaskStatus.COMPLETED,
        result: { text: 'first attempt' },
        attempts: 1,
      },
    );
    expect(
      await new MockActivityEnvironment({ attempt: 2 }).run(callAgent, { ...input(taskId), keepsResult: true }),
    ).toEqual({ kind: 'completed', result: { text: 'first attempt' }, attempt: 1, recorded: true });
    expect(
      server()
        .callsTo('answers')
        .filter((received) => received.body?.taskId === taskId),
    ).toHaveLength(0);
    expect(await taskStore.find(taskId)).toMatchObject({
      status: TaskStatus.COMPLETED,
      result: JSON.stringify({ text: 'first attempt' }),
      attempts: 1,
    });
  });

  it('does not call the agent once the task was cancelled, and answers that it was (a run a Reset started)', async () => {
    const taskId = await pendingTask();
    await taskStore.updateUnconditionally({ taskId }, { status: TaskStatus.CANCELLED });
    expect(await new MockActivityEnvironment({ attempt: 1 }).run(callAgent, input(taskId))).toEqual({
      kind: 'cancelled',
      attempt: 0,
      recorded: true,
    });
    expect(
      server()
        .callsTo('answers')
        .filter((received) => received.body?.taskId === taskId),
    ).toHaveLength(0);
  });

  it('does not call the agent once the calls before a worker restart used up maxAttempts', async () => {
    const taskId = await pendingTask();
    // Two calls counted by a worker that then crashed; Temporal starts the call again at its attempt 1.
    await taskStore.startCall(taskId);
    await taskStore.startCall(taskId);
    const call = new MockActivityEnvironment({ attempt: 1 }).run(callAgent, input(taskId, 2));
    await expect(call).rejects.toMatchObject({
      nonRetryable: true,
      type: 'AGENT_UNREACHABLE',
      message: expect.stringContaining('all 2 attempts were made'),
    });
    expect(
      server()
        .callsTo('answers')
        .filter((received) => received.body?.taskId === taskId),
    ).toHaveLength(0);
  });

  it('still makes the last allowed attempt after a worker restart', async () => {
    const taskId = await pendingTask();
    await taskStore.startCall(taskId);
    expect(await new MockActivityEnvironment({ attempt: 1 }).run(callAgent, input(taskId, 2))).toMatchObject({
      kind: 'completed',
      attempt: 2,
      recorded: true,
    });
    expect(
      server()
        .callsTo('answers')
        .filter((received) => received.body?.taskId === taskId),
    ).toHaveLength(1);
  });

  it('numbers the first call of a first run 1 whatever the count says, and a later attempt by Temporal', async () => {
    const taskId = await pendingTask();
    const first = await new MockActivityEnvironment({ attempt: 1 }).run(callAgent, {
      ...input(taskId),
      firstRun: true,
    });
    expect(first).toEqual({ kind: 'completed', attempt: 1, recorded: true });
    expect((await taskStore.find(taskId))?.callsStarted).toBe(1);

    const retried = await pendingTask();
    await taskStore.updateUnconditionally(
      { taskId: retried },
      {
        attempts: 1,
        attemptError: { attempt: 1, code: 'AGENT_UNREACHABLE', message: 'HTTP 503', at: new Date().toISOString() },
      },
    );
    expect(
      await new MockActivityEnvironment({ attempt: 2 }).run(callAgent, { ...input(retried), firstRun: true }),
    ).toMatchObject({ kind: 'completed', attempt: 2 });
    expect(
      server()
        .callsTo('answers')
        .filter((received) => received.body?.taskId === retried)
        .map((received) => received.headers['webhook-id']),
    ).toEqual([`${retried}-2`]);
  });

  it('numbers the call of a run a Reset started after the calls of the run before, which Temporal counts from 1 again', async () => {
    const taskId = await pendingTask();
    // The first run's call was answered 202 without counting itself (its first attempt).
    await taskStore.updateUnconditionally({ taskId }, { phase: TaskPhase.AWAITING_AGENT_REPORT, attempts: 1 });
    expect(
      await new MockActivityEnvironment({ attempt: 1 }).run(callAgent, { ...input(taskId), firstRun: false }),
    ).toMatchObject({ kind: 'completed', attempt: 2 });
    expect(
      server()
        .callsTo('answers')
        .filter((received) => received.body?.taskId === taskId)
        .map((received) => received.headers['webhook-id']),
    ).toEqual([`${taskId}-2`]);
  });

  it("keeps an agent's refusal final when recording the failed attempt fails", async () => {
    const refusing = await registerAgent({
      mcpUrl: server().route('refuses', () => ({ status: 404, body: 'no such tool' })),
    });
    const unwritable = new (class extends TaskStore {
      override async updateUnconditionally(
        task: Parameters<TaskStore['updateUnconditionally']>[0],
        change: Parameters<TaskStore['updateUnconditionally']>[1],
      ): Promise<void> {
        if ('attemptError' in change) throw new Error('MongoDB went away');
        return super.updateUnconditionally(task, change);
      }
    })(store, new TaskChanges({ workerInProcess: true }), createMetrics());
    const refusingCall = callAgentActivity(
      new RecentAgents(stackAgents(store)),
      unwritable,
      new TaskClaims(store),
      schemas,
      outboundDispatcher({ allowPrivate: true, connectTimeoutMs: 5_000 }),
      sessions,
      { callTimeoutMs: 5_000, maxReplyBytes: 65_536 },
      createMetrics(),
    );
    const taskId = randomUUID();
    await taskStore.create({ kind: PrincipalKind.ADMIN, id: 'admin' }, [
      {
        _id: taskId,
        agentId: refusing.agentId,
        operation: 'tools/echo',
        params: { text: 'x' },
        phase: TaskPhase.CALLING_AGENT,
      },
    ]);
    const call = new MockActivityEnvironment({ attempt: 1 }).run(refusingCall, {
      ...input(taskId),
      agentId: refusing.agentId,
    });
    await expect(call).rejects.toMatchObject({
      nonRetryable: true,
      type: 'AGENT_REJECTED',
      message: 'Agent answered HTTP 404',
    });
  });
});
