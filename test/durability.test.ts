import { AgentServer, type AgentBehaviour, accepts, forever } from './support/agent-server';
import { registerAgent, type RegisteredAgent } from './support/agents';
import { call } from './support/http';
import { useCrashableService } from './support/crashable-service';
import { waitForTask } from './support/tasks';
import { until } from './support/until';
import { gate } from './support/gate';

/** Long enough that no task here times out while its worker is down, however slow the machine. */
const PATIENT_TIMEOUT_MS = 30 * 60_000;
/** The default timeout of this file's API, to see DEFAULT_TASK_TIMEOUT_MS applied without waiting 24 h. */
const SHORT_DEFAULT_TIMEOUT_MS = 3_000;
/**
 * The longest allowed, far longer than the call activity's heartbeat timeout (10 s) and than any
 * wait of this file: a call lost with its worker that is made again within a test was made again
 * because its heartbeats stopped, not because its timeout ran out. How soon is measured by
 * bench/timing (a call lost with its worker).
 */
const AGENT_CALL_TIMEOUT_MS = 10 * 60_000;

/**
 * Crashes and restarts with real processes: a worker and an API of their own on a task queue of
 * their own (the shared service's worker must not take these tasks), killed with SIGKILL.
 */
describe('durability across process crashes', () => {
  const service = useCrashableService('durability', {
    DEFAULT_TASK_TIMEOUT_MS: String(SHORT_DEFAULT_TIMEOUT_MS),
    AGENT_CALL_TIMEOUT_MS: String(AGENT_CALL_TIMEOUT_MS),
  });
  const { startWorker, startApi } = service;
  let server: AgentServer;
  let hookUrl: string;

  beforeAll(async () => {
    server = await AgentServer.start();
    hookUrl = server.route('completions', () => ({ status: 200, body: {} }));
  });
  afterAll(() => server.close());

  async function launch(agent: RegisteredAgent, extra: Record<string, unknown> = {}): Promise<string> {
    const reply = await call('POST', '/tasks', {
      baseUrl: service.baseUrl,
      apiKey: 'admin',
      body: {
        agentId: agent.agentId,
        operation: 'tools/echo',
        params: { text: 'durable' },
        callbackUrl: hookUrl,
        timeoutMs: PATIENT_TIMEOUT_MS,
        ...extra,
      },
    });
    expect(reply.status).toBe(202);
    return reply.body.taskId;
  }
  const callsAbout = (route: string, taskId: string) =>
    server.callsTo(route).filter((received) => received.body?.taskId === taskId);
  /** Exactly one completion callback (and no second one half a second later): the task ended exactly once. */
  async function expectEndedOnce(taskId: string): Promise<void> {
    const completions = () => callsAbout('completions', taskId);
    await until(() => completions().length > 0, 'completion callback');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(completions()).toHaveLength(1);
  }
  const register = (route: string, behaviour: AgentBehaviour) =>
    registerAgent({ mcpUrl: server.route(route, behaviour) });
  /** A task whose agent answered 202 and that now awaits the report. */
  async function awaitingTask(route: string): Promise<{ agent: RegisteredAgent; taskId: string }> {
    const agent = await register(route, accepts);
    const taskId = await launch(agent);
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    return { agent, taskId };
  }

  it('completes each task exactly once across a worker SIGKILL: mid-call, awaiting its report, between retries', async () => {
    let inFlightCalls = 0;
    const workerKilled = gate();
    // The first call is answered only after the worker died; the retry answers at once.
    const inFlightAgent = await register('in-flight', () => {
      inFlightCalls += 1;
      return {
        status: 200,
        body: { status: 'completed', result: { from: inFlightCalls === 1 ? 'first' : 'retry' } },
        heldUntil: inFlightCalls === 1 ? workerKilled.opened : undefined,
      };
    });
    let recoveringCalls = 0;
    const recoveringAgent = await register('recovers', () =>
      (recoveringCalls += 1) <= 2
        ? { status: 503, body: 'busy' }
        : { status: 200, body: { status: 'completed', result: { ok: true } } },
    );

    const awaiting = await awaitingTask('awaits');
    const inFlight = await launch(inFlightAgent);
    const recovering = await launch(recoveringAgent, {
      retry: { maxAttempts: 5, initialIntervalMs: 1_000, backoffCoefficient: 1, maxIntervalMs: 1_000 },
    });
    await until(() => inFlightCalls === 1 && recoveringCalls === 1, 'first agent calls');
    await service.worker().stop('SIGKILL');
    workerKilled.open();
    // Reported while no worker runs: the signal waits in Temporal.
    expect(
      (
        await call('POST', `/tasks/${awaiting.taskId}/result`, {
          baseUrl: service.baseUrl,
          apiKey: awaiting.agent.apiKey,
          body: { status: 'completed', result: { answer: 42 } },
        })
      ).status,
    ).toBe(200);
    await startWorker();

    expect(await waitForTask(awaiting.taskId)).toMatchObject({
      status: 'completed',
      result: { answer: 42 },
      attempts: 1,
    });
    expect(callsAbout('awaits', awaiting.taskId)).toHaveLength(1);
    const recovered = await waitForTask(recovering);
    expect(recovered).toMatchObject({ status: 'completed', result: { ok: true }, attempts: 3 });
    // Attempt 1's error is lost when the kill comes between the 503 and its record; attempt 2's is not.
    expect(recovered.attemptErrors).toEqual(
      expect.arrayContaining([expect.objectContaining({ attempt: 2, code: 'AGENT_UNREACHABLE' })]),
    );
    expect(recoveringCalls).toBe(3);
    expect(await waitForTask(inFlight)).toMatchObject({
      status: 'completed',
      result: { from: 'retry' },
      attempts: 2,
    });
    expect(callsAbout('in-flight', inFlight).map((received) => received.headers['webhook-id'])).toEqual([
      `${inFlight}-1`,
      `${inFlight}-2`,
    ]);
    for (const taskId of [awaiting.taskId, recovering, inFlight]) await expectEndedOnce(taskId);
  });

  it('makes a call lost with its SIGKILLed worker again once its heartbeats stop, long before its timeout, and keeps the answers given before', async () => {
    let fastCalls = 0;
    const fastAgent = await register('answered-before-kill', () => ({
      status: 200,
      body: { status: 'completed', result: { call: (fastCalls += 1) } },
    }));
    let slowCalls = 0;
    const slowAgent = await register('slow-at-kill', () => {
      slowCalls += 1;
      // Still answering when the worker dies, and until the test ends: only a new call can end the task.
      return {
        status: 200,
        body: { status: 'completed', result: { from: slowCalls === 1 ? 'first' : 'retry' } },
        heldUntil: slowCalls === 1 ? forever : undefined,
      };
    });
    const task = (agent: RegisteredAgent) => ({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'durable' },
      callbackUrl: hookUrl,
      timeoutMs: PATIENT_TIMEOUT_MS,
    });
    const reply = await call('POST', '/tasks/compose', {
      baseUrl: service.baseUrl,
      apiKey: 'admin',
      body: [task(fastAgent), task(slowAgent)],
    });
    expect(reply.status).toBe(202);
    const [fast, slow] = reply.body.map((entry: { taskId: string }) => entry.taskId);
    await until(() => slowCalls === 1, 'the slow call');
    expect(await waitForTask(fast)).toMatchObject({ status: 'completed', result: { call: 1 } });
    // The fast task's callback goes out as it ends: killed in flight, it would wait out its activity's
    // one-minute timeout, which is not what this test is about.
    await until(() => callsAbout('completions', fast).length > 0, "the fast task's callback, before the kill");
    await service.worker().stop('SIGKILL');
    await startWorker();

    expect(await waitForTask(slow)).toMatchObject({
      status: 'completed',
      result: { from: 'retry' },
      attempts: 2,
    });
    expect(callsAbout('slow-at-kill', slow).map((received) => received.headers['webhook-id'])).toEqual([
      `${slow}-1`,
      `${slow}-2`,
    ]);
    expect(await waitForTask(fast)).toMatchObject({ status: 'completed', result: { call: 1 }, attempts: 1 });
    expect(fastCalls).toBe(1);
    for (const taskId of [fast, slow]) await expectEndedOnce(taskId);
  });

  it('answers 503 to a cancellation while no worker runs, and cancels once one does', async () => {
    const { taskId } = await awaitingTask('cancel-without-worker');
    await service.worker().stop('SIGKILL');
    const refused = await call('POST', `/tasks/${taskId}/cancel`, { baseUrl: service.baseUrl, apiKey: 'admin' });
    expect(refused.status).toBe(503);
    await startWorker();
    const retried = await call('POST', `/tasks/${taskId}/cancel`, { baseUrl: service.baseUrl, apiKey: 'admin' });
    // 409 when the first attempt's update was applied after all once the worker came back.
    expect([200, 409]).toContain(retried.status);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'cancelled' });
  });

  it('takes the report through a restarted API server', async () => {
    const { agent, taskId } = await awaitingTask('api-restart');
    await service.api().stop('SIGKILL');
    await startApi();
    expect(
      (
        await call('POST', `/tasks/${taskId}/result`, {
          baseUrl: service.baseUrl,
          apiKey: agent.apiKey,
          body: { status: 'completed', result: { after: 'restart' } },
        })
      ).status,
    ).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { after: 'restart' } });
  });

  it('fails a silent task after DEFAULT_TASK_TIMEOUT_MS when it names no timeoutMs', async () => {
    const agent = await register('silent', accepts);
    const taskId = await launch(agent, { timeoutMs: undefined });
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'failed',
      error: { code: 'AGENT_TIMEOUT', message: expect.stringContaining(`${SHORT_DEFAULT_TIMEOUT_MS} ms`) },
    });
  });

  it('answers a waiting lookup on an API without a worker once the worker in the other process ended the task', async () => {
    const answer = gate();
    const agent = await register('slow-elsewhere', () => ({
      status: 200,
      body: { status: 'completed', result: { slow: true } },
      heldUntil: answer.opened,
    }));
    const taskId = await launch(agent);
    await until(() => callsAbout('slow-elsewhere', taskId).length > 0, 'the call');
    // Sent while the agent still holds its answer, which it gives once the lookup is on its way; this
    // API process runs no worker, so it sees the end by re-reading the task.
    const waiting = call('GET', `/tasks/${taskId}?waitMs=30000`, { baseUrl: service.baseUrl, apiKey: 'admin' });
    setTimeout(answer.open, 200);
    expect((await waiting).body).toMatchObject({ taskId, status: 'completed', result: { slow: true } });
  });
});
