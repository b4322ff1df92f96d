import path from 'node:path';
import { freePort } from '../src/embedded/managed-process';
import { AgentServer, type AgentBehaviour } from './support/agent-server';
import { registerAgent, type RegisteredAgent } from './support/agents';
import { call } from './support/http';
import { serviceEnv } from './support/global-setup';
import { ServiceProcess } from './support/service-process';
import { waitForTask } from './support/tasks';
import { testStack } from './support/test-stack';

/** Long enough that no task here times out while its worker is down. */
const PATIENT_TIMEOUT_MS = 120_000;
/** The default timeout of this file's API, to see DEFAULT_TASK_TIMEOUT_MS applied without waiting 24 h. */
const SHORT_DEFAULT_TIMEOUT_MS = 3_000;
/** The worker abandons a call after this (plus its activity margin of 10 s), so a lost call is retried soon. */
const AGENT_CALL_TIMEOUT_MS = 2_000;

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
    api = ServiceProcess.spawn('server.ts', { ...env, PORT: String(apiPort) }, path.join(stack.runDir, `${taskQueue}-api.log`));
    await api.waitReady(baseUrl);
  };

  beforeAll(async () => {
    apiPort = await freePort();
    baseUrl = `http://127.0.0.1:${apiPort}`;
    env = serviceEnv({ ...stack }, { TEMPORAL_TASK_QUEUE: taskQueue, DEFAULT_TASK_TIMEOUT_MS: String(SHORT_DEFAULT_TIMEOUT_MS), AGENT_CALL_TIMEOUT_MS: String(AGENT_CALL_TIMEOUT_MS) });
    server = await AgentServer.start();
    hookUrl = server.route('completions', () => ({ status: 200, body: {} }));
    await Promise.all([startWorker(), startApi()]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([worker?.stop(), api?.stop()]);
    await server.close();
  });

  async function launch(agent: RegisteredAgent, extra: Record<string, unknown> = {}): Promise<string> {
    const reply = await call('POST', '/tasks', { baseUrl, apiKey: 'admin', body: { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'durable' }, callbackUrl: hookUrl, timeoutMs: PATIENT_TIMEOUT_MS, ...extra } });
    expect(reply.status).toBe(202);
    return reply.body.taskId;
  }
  const callsAbout = (route: string, taskId: string) => server.callsTo(route).filter((received) => received.body?.taskId === taskId);
  /** Exactly one completion callback (and no second one half a second later): the task ended exactly once. */
  async function expectEndedOnce(taskId: string): Promise<void> {
    const completions = () => callsAbout('completions', taskId);
    await until(() => completions().length > 0, 'completion callback');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(completions()).toHaveLength(1);
  }
  async function until(probe: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!probe()) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const register = (route: string, behaviour: AgentBehaviour) => registerAgent({ mcpUrl: server.route(route, behaviour) });
  /** A task whose agent answered 202 and that now awaits the report. */
  async function awaitingTask(route: string): Promise<{ agent: RegisteredAgent; taskId: string }> {
    const agent = await register(route, () => ({ status: 202, body: { status: 'received' } }));
    const taskId = await launch(agent);
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    return { agent, taskId };
  }

  it('completes exactly once when the worker is killed while the agent call is in flight', async () => {
    let calls = 0;
    // The first call hangs past the worker's death; the retry answers at once.
    const agent = await register('in-flight', () => ((calls += 1) === 1 ? { status: 200, body: { status: 'completed', result: { from: 'first' } }, delayMs: 1_000 } : { status: 200, body: { status: 'completed', result: { from: 'retry' } } }));
    const taskId = await launch(agent);
    await until(() => calls === 1, 'first agent call');
    await worker.stop('SIGKILL');
    const killedAt = Date.now();
    await startWorker();

    const task = await waitForTask(taskId, { timeoutMs: 60_000 });
    expect(task).toMatchObject({ status: 'completed', result: { from: 'retry' }, attempts: 2 });
    expect(callsAbout('in-flight', taskId).map((received) => received.headers['webhook-id'])).toEqual([`${taskId}-1`, `${taskId}-2`]);
    await expectEndedOnce(taskId);
    process.stdout.write(`[durability] in-flight call: completed ${Date.now() - killedAt} ms after the worker was killed\n`);
  }, 90_000);

  it('completes exactly once when the worker is killed while the task awaits its report', async () => {
    const { agent, taskId } = await awaitingTask('awaits');
    await worker.stop('SIGKILL');

    // Reported while no worker runs: the signal waits in Temporal.
    expect((await call('POST', `/tasks/${taskId}/result`, { baseUrl, apiKey: agent.apiKey, body: { status: 'completed', result: { answer: 42 } } })).status).toBe(200);
    await startWorker();
    expect(await waitForTask(taskId, { timeoutMs: 30_000 })).toMatchObject({ status: 'completed', result: { answer: 42 }, attempts: 1 });
    expect(callsAbout('awaits', taskId)).toHaveLength(1);
    await expectEndedOnce(taskId);
  }, 90_000);

  it('takes the report through a restarted API server', async () => {
    const { agent, taskId } = await awaitingTask('api-restart');
    await api.stop('SIGKILL');
    await startApi();
    expect((await call('POST', `/tasks/${taskId}/result`, { baseUrl, apiKey: agent.apiKey, body: { status: 'completed', result: { after: 'restart' } } })).status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { after: 'restart' } });
  }, 90_000);

  it('completes with attempts 3 an agent that fails twice with 503, across a worker restart', async () => {
    let calls = 0;
    const agent = await register('recovers', () => ((calls += 1) <= 2 ? { status: 503, body: 'busy' } : { status: 200, body: { status: 'completed', result: { ok: true } } }));
    const taskId = await launch(agent, { retry: { maxAttempts: 5, initialIntervalMs: 1_000, backoffCoefficient: 1, maxIntervalMs: 1_000 } });
    await until(() => calls === 1, 'first agent call');
    await worker.stop('SIGKILL');
    await startWorker();
    expect(await waitForTask(taskId, { timeoutMs: 30_000 })).toMatchObject({ status: 'completed', result: { ok: true }, attempts: 3, attemptErrors: [{ attempt: 1 }, { attempt: 2 }] });
    expect(calls).toBe(3);
  }, 90_000);

  it('fails a silent task after DEFAULT_TASK_TIMEOUT_MS when it names no timeoutMs', async () => {
    const agent = await register('silent', () => ({ status: 202, body: { status: 'received' } }));
    const startedAt = Date.now();
    const taskId = await launch(agent, { timeoutMs: undefined });
    const task = await waitForTask(taskId, { timeoutMs: 20_000 });
    expect(task).toMatchObject({ status: 'failed', error: { code: 'AGENT_TIMEOUT', message: expect.stringContaining(`${SHORT_DEFAULT_TIMEOUT_MS} ms`) } });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(SHORT_DEFAULT_TIMEOUT_MS);
  }, 60_000);
});
