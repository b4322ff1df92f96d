// bench/timing: the time properties the tests leave out, since a busy machine would break them there
// (a test says what must happen before what; this says how soon). Each figure is the median of
// some rounds, beside a baseline measured in the same run on the same stack, and their ratio, so
// that runs on machines of any speed, quiet or busy, compare by the ratio.
// Starts its own stack (Temporal dev server, FerretDB, the service as `npm start` runs it) on free
// loopback ports, and a worker and an API of their own on a task queue of their own for the kill.
// Run: npx tsx bench/timing/run.ts [rounds, 5 by default]
import path from 'node:path';
import { freePort } from '../../src/util/ports';
import {
  AgentServer,
  accepts,
  acceptsAndHearsCancel,
  completes,
  forever,
  type ReceivedCall,
} from '../../test/support/agent-server';
import { registerAgent, type RegisteredAgent } from '../../test/support/agents';
import { call } from '../../test/support/http';
import { serviceEnv, startLocalStack } from '../../test/support/local-stack';
import { ServiceProcess } from '../../test/support/service-process';
import { waitForTask } from '../../test/support/tasks';
import { testStack } from '../../test/support/test-stack';
import { until } from '../../test/support/until';

const ROUNDS = Number(process.argv[2] ?? 5);
/** Lookups timed per round and kind. */
const LOOKUPS = 20;
/** The call activity's heartbeat timeout (workflows/activity-stubs.ts): a lost call cannot be made again sooner. */
const HEARTBEAT_TIMEOUT_MS = 10_000;

interface Row {
  measure: string;
  baseline: string;
  ms: number[];
  baselineMs: number[];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** The agent's calls about `taskId` that match `which`, checked every 5 ms. */
const callAbout = (server: AgentServer, route: string, taskId: string, which: (call: ReceivedCall) => boolean) =>
  until(
    () => server.callsTo(route).find((received) => received.body?.taskId === taskId && which(received)),
    `a call to ${route} about ${taskId}`,
    60_000,
    5,
  );

async function startTask(agent: RegisteredAgent, baseUrl?: string): Promise<string> {
  const reply = await call('POST', '/tasks', {
    apiKey: 'admin',
    baseUrl,
    body: { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'timing' } },
  });
  if (reply.status !== 202) throw new Error(`POST /tasks answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body.taskId;
}

const awaitingReport = (taskId: string) =>
  waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' || task.status !== 'pending' });

/** GET /tasks/{taskId}?waitMs= on an ended task, and one refused to a stranger, against the same GET without waitMs. */
async function lookups(server: AgentServer, rows: Row[]): Promise<void> {
  const quick = await registerAgent({ mcpUrl: server.route('quick', completes({ text: 'ok' })) });
  const silent = await registerAgent({ mcpUrl: server.route('silent', accepts) });
  const stranger = await registerAgent();
  const ended: Row = {
    measure: 'lookup of an ended task, waitMs=30000',
    baseline: 'the same without waitMs',
    ms: [],
    baselineMs: [],
  };
  const refused: Row = {
    measure: 'lookup refused to a stranger (404), waitMs=30000',
    baseline: 'the same without waitMs',
    ms: [],
    baselineMs: [],
  };
  for (let round = 0; round < ROUNDS; round++) {
    const done = await startTask(quick);
    await waitForTask(done);
    const pending = await startTask(silent);
    await awaitingReport(pending);
    for (let lookup = 0; lookup < LOOKUPS; lookup++) {
      ended.baselineMs.push(await timed(() => call('GET', `/tasks/${done}`, { apiKey: 'admin' })));
      ended.ms.push(await timed(() => call('GET', `/tasks/${done}?waitMs=30000`, { apiKey: 'admin' })));
      refused.baselineMs.push(await timed(() => call('GET', `/tasks/${pending}`, { apiKey: stranger.apiKey })));
      refused.ms.push(await timed(() => call('GET', `/tasks/${pending}?waitMs=30000`, { apiKey: stranger.apiKey })));
    }
    await call('POST', `/tasks/${pending}/cancel`, { apiKey: 'admin' });
  }
  rows.push(ended, refused);
}

/**
 * The cancellation's answer when the agent refuses the notice, against one whose agent takes it;
 * and how soon the cancellation reaches a call in flight (its connection closed), against how soon
 * it reaches an agent awaited for its report (the notice arrives).
 */
async function cancellations(server: AgentServer, rows: Row[]): Promise<void> {
  const hearing = await registerAgent({ mcpUrl: server.route('hears', acceptsAndHearsCancel) });
  const refusing = await registerAgent({
    mcpUrl: server.route('refuses-notice', (received) =>
      received.body?.cancel ? { status: 503, body: 'busy' } : accepts(received),
    ),
  });
  const busy = await registerAgent({
    mcpUrl: server.route('in-flight', () => ({ status: 200, body: { status: 'completed' }, heldUntil: forever })),
  });
  const answer: Row = {
    measure: "cancellation's answer, the agent refusing the notice",
    baseline: 'the same, the agent taking it',
    ms: [],
    baselineMs: [],
  };
  const reach: Row = {
    measure: 'cancellation to a call in flight abandoned',
    baseline: 'cancellation to the notice at an agent awaited for its report',
    ms: [],
    baselineMs: [],
  };
  const cancel = (taskId: string) => call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' });
  for (let round = 0; round < ROUNDS; round++) {
    const heard = await startTask(hearing);
    await awaitingReport(heard);
    const sentAt = Date.now();
    answer.baselineMs.push(await timed(() => cancel(heard)));
    const notice = await callAbout(server, 'hears', heard, (received) => received.body?.cancel === true);
    reach.baselineMs.push(notice.receivedAt - sentAt);

    const refused = await startTask(refusing);
    await awaitingReport(refused);
    answer.ms.push(await timed(() => cancel(refused)));

    const inFlight = await startTask(busy);
    await callAbout(server, 'in-flight', inFlight, () => true);
    const cancelledAt = performance.now();
    await cancel(inFlight);
    await callAbout(server, 'in-flight', inFlight, (received) => received.abandoned === true);
    reach.ms.push(performance.now() - cancelledAt);
  }
  rows.push(answer, reach);
}

/** A call lost with its SIGKILLed worker: how soon it is made again, against the heartbeat timeout it waits out. */
async function lostCalls(server: AgentServer, runDir: string, rows: Row[]): Promise<void> {
  const stack = testStack();
  const taskQueue = `timing-${process.pid}`;
  const apiPort = await freePort();
  const baseUrl = `http://127.0.0.1:${apiPort}`;
  const env = serviceEnv(stack, {
    TEMPORAL_TASK_QUEUE: taskQueue,
    // The longest allowed: a call made again within the bench was made again by its missing heartbeats.
    AGENT_CALL_TIMEOUT_MS: String(10 * 60_000),
  });
  const spawnWorker = async () => {
    const worker = ServiceProcess.spawn('worker.ts', env, path.join(runDir, `${taskQueue}-worker.log`));
    await worker.waitForLog('worker polling');
    return worker;
  };
  const api = ServiceProcess.spawn(
    'server.ts',
    { ...env, PORT: String(apiPort) },
    path.join(runDir, `${taskQueue}-api.log`),
  );
  let worker = await spawnWorker();
  const row: Row = {
    measure: 'a call lost with its SIGKILLed worker, made again (after the kill)',
    baseline: `the call's heartbeat timeout, ${HEARTBEAT_TIMEOUT_MS} ms`,
    ms: [],
    baselineMs: [],
  };
  try {
    await api.waitReady(baseUrl);
    let calls = 0;
    const agent = await registerAgent({
      mcpUrl: server.route('lost', () => ({
        status: 200,
        body: { status: 'completed', result: {} },
        heldUntil: (calls += 1) % 2 === 1 ? forever : undefined,
      })),
    });
    const rounds = Math.min(ROUNDS, 3);
    for (let round = 0; round < rounds; round++) {
      const taskId = await startTask(agent, baseUrl);
      await callAbout(server, 'lost', taskId, () => true);
      await worker.stop('SIGKILL');
      const killedAt = Date.now();
      worker = await spawnWorker();
      const again = await callAbout(
        server,
        'lost',
        taskId,
        (received) => received.headers['webhook-id'] === `${taskId}-2`,
      );
      row.ms.push(again.receivedAt - killedAt);
      row.baselineMs.push(HEARTBEAT_TIMEOUT_MS);
      await waitForTask(taskId, { baseUrl });
    }
  } finally {
    await Promise.all([worker.stop(), api.stop()]);
  }
  rows.push(row);
}

async function main(): Promise<void> {
  const local = await startLocalStack({
    runDirPrefix: 'acs-timing-',
    database: 'acs_timing',
    env: { LOG_LEVEL: 'warn' },
  });
  const server = await AgentServer.start();
  const rows: Row[] = [];
  try {
    await lookups(server, rows);
    await cancellations(server, rows);
    await lostCalls(server, local.runDir, rows);
  } finally {
    await server.close();
    await local.stop();
  }
  process.stdout.write(`\n${ROUNDS} rounds, medians in ms\n\n`);
  process.stdout.write('| measure | ms | baseline | baseline ms | ratio |\n|---|---|---|---|---|\n');
  for (const row of rows) {
    const [ms, baselineMs] = [median(row.ms), median(row.baselineMs)];
    process.stdout.write(
      `| ${row.measure} | ${ms.toFixed(1)} | ${row.baseline} | ${baselineMs.toFixed(1)} | ${(ms / baselineMs).toFixed(2)} |\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
