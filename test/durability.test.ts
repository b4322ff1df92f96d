import path from 'node:path';
import { freePort } from '../src/util/ports';
import { AgentServer, type AgentBehaviour, accepts } from './support/agent-server';
import { registerAgent, type RegisteredAgent } from './support/agents';
import { call } from './support/http';
import { serviceEnv } from './support/global-setup';
import { ServiceProcess } from './support/service-process';
import { waitForTask } from './support/tasks';
import { testStack } from './support/test-stack';
import { until } from './support/until';

/** Long enough that no task here times out while its worker is down. */
const PATIENT_TIMEOUT_MS = 120_000;
/** The default timeout of this file's API, to see DEFAULT_TASK_TIMEOUT_MS applied without waiting 24 h. */
const SHORT_DEFAULT_TIMEOUT_MS = 3_000;
/**
 * Far longer than the call activity's heartbeat timeout (10 s): a call lost with its worker must be
 * made again once its heartbeats stop, not after this (plus the activity's margin of 10 s).
 */
const AGENT_CALL_TIMEOUT_MS = 60_000;
/** A lost call is made again within this of the kill: the heartbeat timeout and a retry's interval, with room for a loaded machine. */
const LOST_CALL_RETRIED_WITHIN_MS = 30_000;

/**
 * Crashes and restarts with real processes: a worker and an API of their own on a task queue of
 * their own (the shared service's worker must not take these tasks), killed with SIGKILL.
 */
describe('durability across process crashes', () => {
  const taskQueue = `durability-${process.pid}`;
  const stack = testStack();
  let env: Record<string, string>;
  let baseUrl: string;
  let apiPort: number;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let server: AgentServer;
  let hookUrl: string;

  const startWorker = async () => {
    worker = ServiceProcess.spawn('worker.ts', env, path.join(stack.runDir, `${taskQueue}-worker.log`));
    await worker.waitForLog('worker polling');
  };
  const startApi = async () => {
    api = ServiceProcess.spawn(
      'server.ts',
      { ...env, PORT: String(apiPort) },
      path.join(stack.runDir, `${taskQueue}-api.log`),
    );
    await api.waitReady(baseUrl);
  };

  beforeAll(async () => {
    apiPort = await freePort();
    baseUrl = `http://127.0.0.1:${apiPort}`;
    env = serviceEnv(
      { ...stack },
      {
        TEMPORAL_TASK_QUEUE: taskQueue,
        DEFAULT_TASK_TIMEOUT_MS: String(SHORT_DEFAULT_TIMEOUT_MS),
        AGENT_CALL_TIMEOUT_MS: String(AGENT_CALL_TIMEOUT_MS),
      },
    );
    server = await AgentServer.start();
    hookUrl = server.route('completions', () => ({ status: 200, body: {} }));
    await Promise.all([startWorker(), startApi()]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([worker?.stop(), api?.stop()]);
    await server.close();
  });

  async function launch(agent: RegisteredAgent, extra: Record<string, unknown> = {}): Promise<string> {
    const reply = await call('POST', '/tasks', {
      baseUrl,
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
    // The first call is answered only after the worker died; the retry answers at once.
    const inFlightAgent = await register('in-flight', () => {
      inFlightCalls += 1;
      return {
        status: 200,
        body: { status: 'completed', result: { from: inFlightCalls === 1 ? 'first' : 'retry' } },
        delayMs: inFlightCalls === 1 ? 3_000 : 0,
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
    await worker.stop('SIGKILL');
    const killedAt = Date.now();
    // Reported while no worker runs: the signal waits in Temporal.
    expect(
      (
        await call('POST', `/tasks/${awaiting.taskId}/result`, {
          baseUrl,
          apiKey: awaiting.agent.apiKey,
          body: { status: 'completed', result: { answer: 42 } },
        })
      ).status,
    ).toBe(200);
    await startWorker();

    expect(await waitForTask(awaiting.taskId, { timeoutMs: 30_000 })).toMatchObject({
      status: 'completed',
      result: { answer: 42 },
      attempts: 1,
    });
    expect(callsAbout('awaits', awaiting.taskId)).toHaveLength(1);
    const recovered = await waitForTask(recovering, { timeoutMs: 30_000 });
    expect(recovered).toMatchObject({ status: 'completed', result: { ok: true }, attempts: 3 });
    // Attempt 1's error is lost when the kill comes between the 503 and its record; attempt 2's is not.
    expect(recovered.attemptErrors).toEqual(
      expect.arrayContaining([expect.objectContaining({ attempt: 2, code: 'AGENT_UNREACHABLE' })]),
    );
    expect(recoveringCalls).toBe(3);
    expect(await waitForTask(inFlight, { timeoutMs: 60_000 })).toMatchObject({
      status: 'completed',
      result: { from: 'retry' },
      attempts: 2,
    });
    process.stdout.write(`[durability] call in flight at the kill: completed ${Date.now() - killedAt} ms after it\n`);
    expect(callsAbout('in-flight', inFlight).map((received) => received.headers['webhook-id'])).toEqual([
      `${inFlight}-1`,
      `${inFlight}-2`,
    ]);
    for (const taskId of [awaiting.taskId, recovering, inFlight]) await expectEndedOnce(taskId);
  }, 120_000);

  it('makes a call lost with its SIGKILLed worker again once its heartbeats stop, long before its timeout, and keeps the answers given before', async () => {
    let fastCalls = 0;
    const fastAgent = await register('answered-before-kill', () => ({
      status: 200,
      body: { status: 'completed', result: { call: (fastCalls += 1) } },
    }));
    const slowCalls: number[] = [];
    const slowAgent = await register('slow-at-kill', () => {
      slowCalls.push(Date.now());
      // Still answering when the worker dies, and long after: only a new call can end the task.
      return {
        status: 200,
        body: { status: 'completed', result: { from: slowCalls.length === 1 ? 'first' : 'retry' } },
        delayMs: slowCalls.length === 1 ? 50_000 : 0,
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
      baseUrl,
      apiKey: 'admin',
      body: [task(fastAgent), task(slowAgent)],
    });
    expect(reply.status).toBe(202);
    const [fast, slow] = reply.body.map((entry: { taskId: string }) => entry.taskId);
    await until(() => slowCalls.length === 1, 'the slow call');
    expect(await waitForTask(fast)).toMatchObject({ status: 'completed', result: { call: 1 } });
    // The fast task's callback goes out as it ends: killed in flight, it would wait out its activity's
    // one-minute timeout, which is not what this test is about.
    await until(() => callsAbout('completions', fast).length > 0, "the fast task's callback, before the kill");
    await worker.stop('SIGKILL');
    const killedAt = Date.now();
    await startWorker();

    expect(await waitForTask(slow, { timeoutMs: 45_000 })).toMatchObject({
      status: 'completed',
      result: { from: 'retry' },
      attempts: 2,
    });
    process.stdout.write(
      `[durability] call lost with its worker: made again ${slowCalls[1] - killedAt} ms after the kill\n`,
    );
    expect(slowCalls[1] - killedAt).toBeLessThan(LOST_CALL_RETRIED_WITHIN_MS);
    expect(callsAbout('slow-at-kill', slow).map((received) => received.headers['webhook-id'])).toEqual([
      `${slow}-1`,
      `${slow}-2`,
    ]);
    expect(await waitForTask(fast)).toMatchObject({ status: 'completed', result: { call: 1 }, attempts: 1 });
    expect(fastCalls).toBe(1);
    for (const taskId of [fast, slow]) await expectEndedOnce(taskId);
  }, 90_000);

  it('answers 503 to a cancellation while no worker runs, and cancels once one does', async () => {
    const { taskId } = await awaitingTask('cancel-without-worker');
    await worker.stop('SIGKILL');
    const startedAt = Date.now();
    const refused = await call('POST', `/tasks/${taskId}/cancel`, { baseUrl, apiKey: 'admin' });
    process.stdout.write(
      `[durability] cancel without a worker: ${refused.status} after ${Date.now() - startedAt} ms\n`,
    );
    expect(refused.status).toBe(503);
    await startWorker();
    const retried = await call('POST', `/tasks/${taskId}/cancel`, { baseUrl, apiKey: 'admin' });
    // 409 when the first attempt's update was applied after all once the worker came back.
    expect([200, 409]).toContain(retried.status);
    expect(await waitForTask(taskId, { timeoutMs: 20_000 })).toMatchObject({ status: 'cancelled' });
  }, 90_000);

  it('takes the report through a restarted API server', async () => {
    const { agent, taskId } = await awaitingTask('api-restart');
    await api.stop('SIGKILL');
    await startApi();
    expect(
      (
        await call('POST', `/tasks/${taskId}/result`, {
          baseUrl,
          apiKey: agent.apiKey,
          body: { status: 'completed', result: { after: 'restart' } },
        })
      ).status,
    ).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { after: 'restart' } });
  }, 90_000);

  it('fails a silent task after DEFAULT_TASK_TIMEOUT_MS when it names no timeoutMs', async () => {
    const agent = await register('silent', accepts);
    const startedAt = Date.now();
    const taskId = await launch(agent, { timeoutMs: undefined });
    const task = await waitForTask(taskId, { timeoutMs: 20_000 });
    expect(task).toMatchObject({
      status: 'failed',
      error: { code: 'AGENT_TIMEOUT', message: expect.stringContaining(`${SHORT_DEFAULT_TIMEOUT_MS} ms`) },
    });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(SHORT_DEFAULT_TIMEOUT_MS);
  }, 60_000);

  it('answers a waiting lookup on an API without a worker once the worker in the other process ended the task', async () => {
    const agent = await register('slow-elsewhere', () => ({
      status: 200,
      body: { status: 'completed', result: { slow: true } },
      delayMs: 1_000,
    }));
    const taskId = await launch(agent);
    const startedAt = Date.now();
    const reply = await call('GET', `/tasks/${taskId}?waitMs=20000`, { baseUrl, apiKey: 'admin' });
    const elapsedMs = Date.now() - startedAt;
    expect(reply.body).toMatchObject({ taskId, status: 'completed', result: { slow: true } });
    // Seen by re-reading (this API process runs no worker): after the 1 s call, within a few re-reads.
    expect(elapsedMs).toBeGreaterThanOrEqual(900);
    expect(elapsedMs).toBeLessThan(10_000);
  }, 30_000);
});
