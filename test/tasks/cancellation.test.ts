import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { useAgentServer, completes, signatureWith, acceptsAndHearsCancel, forever } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { waitForTask, startTask, reportOn } from '../support/tasks';
import { withTemporal } from '../support/temporal';
import { testStack } from '../support/test-stack';
import { DEFAULT_RETRY, type PlannedTask } from '../../workflows/task-types';
import { closedStatus, until } from '../support/until';

/** POST /tasks/{taskId}/cancel: the task, its composed dependants and its delegated tree. */
describe('task cancellation', () => {
  const server = useAgentServer();
  let patient: RegisteredAgent;
  let mongo: MongoClient;

  beforeAll(async () => {
    mongo = await MongoClient.connect(testStack().mongoUri);
    // Answers 202 to a task and 200 to the cancellation notice.
    patient = await registerAgent({
      mcpUrl: server().route('patient', acceptsAndHearsCancel),
    });
  });
  afterAll(async () => {
    await mongo.close();
  });

  const awaiting = (task: any) => task.phase === 'awaiting_agent_report' || task.status !== 'pending';
  async function awaitingTask(apiKey = 'admin'): Promise<string> {
    const reply = await call('POST', '/tasks', {
      apiKey,
      body: { agentId: patient.agentId, operation: 'tools/echo', params: { text: 'wait' } },
    });
    expect(reply.status).toBe(202);
    expect(await waitForTask(reply.body.taskId, { until: awaiting })).toMatchObject({ phase: 'awaiting_agent_report' });
    return reply.body.taskId;
  }
  const cancel = (taskId: string, apiKey = 'admin') => call('POST', `/tasks/${taskId}/cancel`, { apiKey });

  it('cancels a task awaiting its report and tells the agent with a signed POST; a second cancel is 409', async () => {
    const taskId = await awaitingTask();
    expect(await cancel(taskId)).toMatchObject({ status: 200, body: { taskId, status: 'cancelled' } });
    expect((await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body).toMatchObject({ status: 'cancelled' });

    const notice = await until(
      () =>
        server()
          .callsTo('patient')
          .find((received) => received.body?.taskId === taskId && received.body?.cancel),
      'cancel notice',
    );
    expect(notice.body).toEqual({ taskId, cancel: true });
    expect(notice.headers['webhook-signature']).toBe(signatureWith(patient.signingSecret, notice));

    expectError(await cancel(taskId), 409, 'CONFLICT');
    expectError(await reportOn(taskId, patient.apiKey, { status: 'completed', result: {} }), 409, 'CONFLICT');
  });

  it('answers a cancellation at once even when the agent refuses the notice; the notice is retried', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('refuses-notice', (received) =>
        received.body?.cancel ? { status: 503, body: 'busy' } : { status: 202, body: { status: 'received' } },
      ),
    });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' } });
    await waitForTask(taskId, { until: awaiting });
    // How soon it answers is measured by bench/timing (the cancellation's answer).
    expect((await cancel(taskId)).status).toBe(200);
    await until(
      () =>
        server()
          .callsTo('refuses-notice')
          .filter((received) => received.body?.cancel).length >= 2,
      'second cancel notice',
    );
  });

  it('cancels a task whose agent call is being retried', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('busy', () => ({ status: 503, body: 'busy' })) });
    const taskId = await startTask({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'x' },
      retry: { maxAttempts: 10, initialIntervalMs: 10_000, maxIntervalMs: 10_000 },
    });
    await waitForTask(taskId, { until: (task) => task.phase === 'retrying' });
    expect(await cancel(taskId)).toMatchObject({ status: 200, body: { status: 'cancelled' } });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'cancelled' });
  });

  it('cancels a task whose agent call is in flight, abandoning the call', async () => {
    // The agent is still answering when the test ends: only the cancellation can end the call.
    const slow = await registerAgent({
      mcpUrl: server().route('slow', () => ({
        status: 200,
        body: { status: 'completed', result: { late: true } },
        heldUntil: forever,
      })),
    });
    const taskId = await startTask({ agentId: slow.agentId, operation: 'tools/echo', params: { text: 'x' } });
    await until(
      () =>
        server()
          .callsTo('slow')
          .some((received) => received.body?.taskId === taskId),
      'the call to the slow agent',
    );
    expect(await cancel(taskId)).toMatchObject({ status: 200, body: { taskId, status: 'cancelled' } });
    // The workflow hears of it when the worker renews the call's workflow task, every 4 s; how soon
    // the call is abandoned is measured by bench/timing.
    await until(
      () =>
        server()
          .callsTo('slow')
          .some((received) => received.body?.taskId === taskId && received.abandoned),
      'the call abandoned',
    );
    expect((await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body).toMatchObject({ status: 'cancelled' });
    expect(
      server()
        .callsTo('slow')
        .filter((received) => received.body?.taskId === taskId),
    ).toEqual([expect.objectContaining({ abandoned: true })]);
  });

  it('fails composed dependants with DEPENDENCY_FAILED and lets independent tasks finish', async () => {
    const fast = await registerAgent({ mcpUrl: server().route('fast', completes({ text: 'ok' })) });
    const task = (agentId: string, extra: Record<string, unknown> = {}) => ({
      agentId,
      operation: 'tools/echo',
      params: { text: 'c' },
      ...extra,
    });
    const reply = await call('POST', '/tasks/compose', {
      apiKey: 'admin',
      body: [task(patient.agentId), task(fast.agentId, { parents: ['0'] }), task(fast.agentId)],
    });
    expect(reply.status).toBe(202);
    const [first, dependant, independent] = reply.body.map((entry: any) => entry.taskId);
    await waitForTask(first, { until: awaiting });
    expect((await cancel(first)).status).toBe(200);
    expect(await waitForTask(dependant)).toMatchObject({ status: 'failed', error: { code: 'DEPENDENCY_FAILED' } });
    expect(await waitForTask(independent)).toMatchObject({ status: 'completed' });
    expect((await call('GET', `/compositions/${reply.body[0].compositionId}`, { apiKey: 'admin' })).body.status).toBe(
      'failed',
    );
  });

  it('cancels a composed task still waiting for its parents, leaving the parent running', async () => {
    const task = { agentId: patient.agentId, operation: 'tools/echo', params: { text: 'p' } };
    const reply = await call('POST', '/tasks/compose', { apiKey: 'admin', body: [task, { ...task, parents: ['0'] }] });
    const [parent, child] = reply.body.map((entry: any) => entry.taskId);
    expect(await waitForTask(child, { until: (view) => view.phase === 'waiting_for_parents' })).toMatchObject({
      phase: 'waiting_for_parents',
    });
    expect((await cancel(child)).status).toBe(200);
    expect((await call('GET', `/tasks/${parent}`, { apiKey: 'admin' })).body).toMatchObject({ status: 'pending' });
    expect((await reportOn(parent, patient.apiKey, { status: 'completed', result: { done: 1 } })).status).toBe(200);
    expect(await waitForTask(parent)).toMatchObject({ status: 'completed' });
    expect(
      server()
        .callsTo('patient')
        .filter((received) => received.body?.taskId === child),
    ).toHaveLength(0);
  });

  it('cancels the tasks delegated from it, down the whole tree', async () => {
    const [root, child, grandchild, unrelated] = [
      await awaitingTask(),
      await awaitingTask(),
      await awaitingTask(),
      await awaitingTask(),
    ];
    const tasks = mongo.db(testStack().mongoDatabase).collection('tasks');
    await tasks.updateOne({ _id: child as any }, { $set: { parentTaskId: root } });
    await tasks.updateOne({ _id: grandchild as any }, { $set: { parentTaskId: child } });

    expect((await cancel(root)).status).toBe(200);
    expect((await call('GET', `/tasks/${child}`, { apiKey: 'admin' })).body).toMatchObject({
      status: 'cancelled',
      parentTaskId: root,
    });
    expect((await call('GET', `/tasks/${grandchild}`, { apiKey: 'admin' })).body).toMatchObject({
      status: 'cancelled',
      parentTaskId: child,
    });
    expect((await call('GET', `/tasks/${unrelated}`, { apiKey: 'admin' })).body).toMatchObject({ status: 'pending' });
    expect((await cancel(unrelated)).status).toBe(200);
  });

  it('records the tasks an operator cut short by cancelling their workflow in Temporal, and tells their agents', async () => {
    const fast = await registerAgent({ mcpUrl: server().route('fast-before-operator', completes({ text: 'ok' })) });
    const task = (agentId: string, extra: Record<string, unknown> = {}) => ({
      agentId,
      operation: 'tools/echo',
      params: { text: 'o' },
      ...extra,
    });
    const reply = await call('POST', '/tasks/compose', {
      apiKey: 'admin',
      body: [task(fast.agentId), task(patient.agentId), task(fast.agentId, { parents: ['1'] })],
    });
    const [done, awaited, waiting] = reply.body.map((entry: any) => entry.taskId);
    await waitForTask(awaited, { until: awaiting });
    expect(await waitForTask(done)).toMatchObject({ status: 'completed' });

    await withTemporal(async (client) => {
      const workflow = client.workflow.getHandle(`composition-${reply.body[0].compositionId}`);
      await workflow.cancel();
      expect(await waitForTask(awaited)).toMatchObject({ status: 'cancelled' });
      expect(await waitForTask(waiting)).toMatchObject({ status: 'cancelled' });
      expect((await call('GET', `/tasks/${done}`, { apiKey: 'admin' })).body).toMatchObject({ status: 'completed' });
      await until(
        () =>
          server()
            .callsTo('patient')
            .some((received) => received.body?.taskId === awaited && received.body?.cancel),
        'cancel notice',
      );
      // Shown as cancelled in the Web UI once the notice went out.
      expect(await closedStatus(workflow)).toBe('CANCELLED');
    });
    expect(
      server()
        .callsTo('fast-before-operator')
        .filter((received) => received.body?.taskId === waiting),
    ).toHaveLength(0);
  });

  it('records the tasks still running in a workflow an operator terminated as cancelled, leaving ended ones as they were', async () => {
    const fast = await registerAgent({ mcpUrl: server().route('fast-before-terminate', completes({ text: 'ok' })) });
    const task = (agentId: string) => ({ agentId, operation: 'tools/echo', params: { text: 't' } });
    const reply = await call('POST', '/tasks/compose', {
      apiKey: 'admin',
      body: [task(fast.agentId), task(patient.agentId)],
    });
    const [done, awaited] = reply.body.map((entry: any) => entry.taskId);
    await waitForTask(awaited, { until: awaiting });
    expect(await waitForTask(done)).toMatchObject({ status: 'completed' });

    await withTemporal((client) =>
      client.workflow.getHandle(`composition-${reply.body[0].compositionId}`).terminate('operator test'),
    );
    // No workflow code runs after a terminate: the worker process finds the run and ends the task.
    expect(await waitForTask(awaited)).toMatchObject({ status: 'cancelled' });
    expect((await call('GET', `/tasks/${done}`, { apiKey: 'admin' })).body).toMatchObject({
      status: 'completed',
      result: { text: 'ok' },
    });
    expect((await call('GET', `/compositions/${reply.body[0].compositionId}`, { apiKey: 'admin' })).body.status).toBe(
      'cancelled',
    );
  });

  it('records the task of a workflow that timed out as failed with WORKFLOW_ENDED', async () => {
    // The service starts its workflows without a run timeout; one started with it stands for any
    // run that closed on its own without ending its tasks (TimedOut, like Failed, runs no more code).
    const taskId = randomUUID();
    const now = new Date();
    await mongo
      .db(testStack().mongoDatabase)
      .collection<any>('tasks')
      .insertOne({
        _id: taskId,
        agentId: patient.agentId,
        operation: 'tools/echo',
        params: JSON.stringify({ text: 'times out' }),
        status: 'pending',
        phase: 'calling_agent',
        createdBy: { kind: 'admin', id: 'admin' },
        createdAt: now,
        updatedAt: now,
      });
    const planned: PlannedTask = {
      taskId,
      agentId: patient.agentId,
      agentName: patient.name,
      operation: 'tools/echo',
      params: { text: 'times out' },
      parents: [],
      executeOnParentFailure: false,
      timeoutMs: 60_000,
      retry: DEFAULT_RETRY,
      notifyAgent: false,
    };
    await withTemporal((client) =>
      client.workflow.start('compositionWorkflow', {
        workflowId: `task-${taskId}`,
        taskQueue: testStack().taskQueue,
        args: [{ tasks: [planned], agentCallTimeoutMs: 5_000 }],
        workflowExecutionTimeout: '2 seconds',
      }),
    );
    // Whether the run times out before or after it called the agent, the task ends the same way.
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'failed',
      error: {
        code: 'WORKFLOW_ENDED',
        message: `The task's workflow task-${taskId} ended TIMED_OUT before the task ended`,
      },
    });
  });

  it('answers 409 for an ended task, 403 to its agent, 404 to those who may not read it as for an unknown task', async () => {
    const creator = await registerAgent();
    const taskId = await awaitingTask(creator.apiKey);
    expect(expectError(await cancel(taskId, (await registerAgent()).apiKey), 404, 'NOT_FOUND').message).toBe(
      `Task ${taskId} not found`,
    );
    // Its agent may read the task, so a 403 tells it nothing new.
    expectError(await cancel(taskId, patient.apiKey), 403, 'FORBIDDEN');
    expect(expectError(await cancel('no-such-task'), 404, 'NOT_FOUND').message).toBe('Task no-such-task not found');
    expect((await reportOn(taskId, patient.apiKey, { status: 'completed', result: { done: true } })).status).toBe(200);
    await waitForTask(taskId);
    expectError(await cancel(taskId, creator.apiKey), 409, 'CONFLICT');
  });
});
