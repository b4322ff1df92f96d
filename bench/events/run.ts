// bench/events: how many task events a composition's Server-Sent Events stream delivers per second
// to 100 subscribers, and how long an agent's progress report takes to reach them, against the
// report's own round trip and a client polling GET /tasks/{taskId}. Starts its own stack (Temporal
// dev server, FerretDB, the service as `npm start` runs it) on free loopback ports.
// Run: npx tsx bench/events/run.ts [--task] [--reporters N]   (about 2 minutes)
//   --task: the same on one task's own log (GET /tasks/{taskId}/events), the reports all on that task.
//   --reporters N: reporters of the throughput phase (default: one per task of the log).
import fs from 'node:fs';
import os from 'node:os';
import { Agent, request, type Dispatcher } from 'undici';
import { AgentServer, accepts } from '../../test/support/agent-server';
import { registerAgent } from '../../test/support/agents';
import { startLocalStack } from '../../test/support/local-stack';
import { cpuDuring } from '../tasks/process-cpu';
import type { Sample } from '../tasks/sample';
import { Deliveries } from './deliveries';
import { SseSubscriber } from './sse-subscriber';

/**
 * Tasks of a composition. By default each has one reporter, as an agent reports on its own task:
 * its reports one after another, each sent once the one before was answered.
 */
const TASKS_PER_COMPOSITION = 10;
const SUBSCRIBERS = 100;
/** Reports per variant of the throughput phase, over all rounds. */
const THROUGHPUT_REPORTS = 2_000;
/** Reports per variant of the latency phase, over all rounds, sent at LATENCY_RATE whatever the answers. */
const LATENCY_REPORTS = 500;
const LATENCY_RATE = 40;
/** Variants alternate in this many rounds, so that a change in the machine's speed falls on all alike. */
const ROUNDS = 2;
/** Longest wait for the streams to receive what was reported, or to end. */
const DRAIN_MS = 30_000;
/** Longest a poller reads a task for a report before it counts the report as not seen. */
const POLL_GIVE_UP_MS = 5_000;
/** Longest wait for a new log's tasks to be accepted by the agent. */
const ACCEPTED_WITHIN_MS = 15_000;
/** How long the processes' CPU is measured with nothing reported. */
const IDLE_MS = 5_000;
/** Times each read of a whole log is repeated; the median counts. */
const LOG_READS = 5;
/** The p99 the issue asks of a report's delay to the stream, at 100 subscribers. */
const GOAL_P99_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], fraction: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const whole = (value: number) =>
  Number.isFinite(value) ? Math.round(value).toLocaleString('en-US').replace(/,/g, ' ') : 'n/a';
const ratio = (value: number) => `${fixed(value, 2)} ×`;

/** Resolves true once `done()` holds, checking every 10 ms; false when `timeoutMs` passed first. */
async function until(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

/** Starts `job(n)` for n < count at `rate` per second, whatever the earlier ones are doing; waits for all. */
async function atFixedRate(count: number, rate: number, job: (n: number) => Promise<void>): Promise<void> {
  const started = performance.now();
  const running: Array<Promise<void>> = [];
  for (let n = 0; n < count; n += 1) {
    const wait = started + (n * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    running.push(job(n));
  }
  const failed = (await Promise.allSettled(running)).find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

/** One event log the bench reports into and reads: a composition's, or a task's own (--task). */
interface Log {
  /** The log's route, without the `/events`. */
  path: string;
  /** The tasks the reports go to, in turn. */
  taskIds: string[];
  /** The id the stream gives an event. */
  idOf: (event: { seq: number; taskId: string }) => string;
}

interface StoredEvent {
  seq: number;
  taskId: string;
  type: string;
  message?: string;
}

async function main(): Promise<void> {
  const ownLogs = process.argv.includes('--task');
  const tasksPerLog = ownLogs ? 1 : TASKS_PER_COMPOSITION;
  const logName = ownLogs ? 'task' : `composition of ${TASKS_PER_COMPOSITION} tasks`;
  const reportersArgument = process.argv.indexOf('--reporters');
  const reporters = reportersArgument < 0 ? tasksPerLog : Number(process.argv[reportersArgument + 1]);
  if (!Number.isInteger(reporters) || reporters < 1 || reporters > 100)
    throw new Error('--reporters takes a whole number from 1 to 100');
  const local = await startLocalStack({
    runDirPrefix: 'acs-bench-events-',
    database: 'acs_bench_events',
    // The agent's reports are writes of one principal: thousands a minute are the load here, not abuse.
    env: {
      LOG_LEVEL: 'warn',
      RATE_LIMIT_WRITES: '0',
      // npm start's look for closed runs, rather than the test stack's twice a second.
      ENDED_RUNS_CHECK_MS: '10000',
    },
  });
  const { stack, service, processes: servers } = local;
  let succeeded = false;
  const agentServer = await AgentServer.start();
  // Reports and lookups on a pool of their own; each stream holds one connection of the other.
  const calls = new Agent({ keepAliveTimeout: 60_000 });
  const streams = new Agent({ keepAliveTimeout: 60_000 });
  const opened: SseSubscriber[] = [];
  try {
    const { baseUrl, adminKey } = stack;
    const api = async (
      method: Dispatcher.HttpMethod,
      route: string,
      { body, apiKey = adminKey }: { body?: unknown; apiKey?: string } = {},
    ): Promise<any> => {
      const response = await request(`${baseUrl}${route}`, {
        method,
        dispatcher: calls,
        headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const parsed = await response.body.json();
      if (response.statusCode !== 200 && response.statusCode !== 202)
        throw new Error(`${method} ${route} answered ${response.statusCode}: ${JSON.stringify(parsed)}`);
      return parsed;
    };
    const agent = await registerAgent({
      mcpUrl: agentServer.route('agent', accepts),
      capabilities: {
        tools: [
          {
            name: 'echo',
            description: 'echo',
            inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
          },
        ],
      },
    });
    const report = (taskId: string, body: Record<string, unknown>): Promise<unknown> =>
      api('POST', `/tasks/${taskId}/result`, { apiKey: agent.apiKey, body });
    /** Progress reports the service refused, by status and error message: counted, not thrown. */
    const refused = new Map<string, number>();
    /** A progress report; whether the service took it (200). */
    const progress = async (taskId: string, message: string, share: number): Promise<boolean> => {
      const response = await request(`${baseUrl}/tasks/${taskId}/result`, {
        method: 'POST',
        dispatcher: calls,
        headers: { 'x-api-key': agent.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'pending', progress: share, message }),
      });
      const text = await response.body.text();
      if (response.statusCode === 200) return true;
      const why = `${response.statusCode} ${text.slice(0, 200)}`;
      refused.set(why, (refused.get(why) ?? 0) + 1);
      return false;
    };
    const logOf = ({ path }: Log): Promise<StoredEvent[]> => api('GET', `${path}/events?format=json`);

    /**
     * A composition of TASKS_PER_COMPOSITION tasks (with --task, one task outside any composition),
     * once every task's accepted event is stored.
     */
    const compose = async (): Promise<Log> => {
      const tasks = Array.from({ length: tasksPerLog }, (_, index) => ({
        agentId: agent.agentId,
        operation: 'tools/echo',
        params: { text: `task ${index}` },
      }));
      let log: Log;
      if (ownLogs) {
        const { taskId } = (await api('POST', '/tasks', { body: tasks[0] })) as { taskId: string };
        log = { path: `/tasks/${taskId}`, taskIds: [taskId], idOf: ({ seq }) => String(seq) };
      } else {
        const created = (await api('POST', '/tasks/compose', { body: tasks })) as Array<{
          taskId: string;
          compositionId: string;
        }>;
        log = {
          path: `/compositions/${created[0].compositionId}`,
          taskIds: created.map((task) => task.taskId),
          idOf: ({ seq, taskId }) => `${taskId}:${seq}`,
        };
      }
      const deadline = Date.now() + ACCEPTED_WITHIN_MS;
      for (;;) {
        const events = await logOf(log);
        if (events.filter((event) => event.type === 'accepted').length === tasksPerLog) return log;
        if (Date.now() > deadline)
          throw new Error(
            `${log.path}: not every task accepted within ${ACCEPTED_WITHIN_MS} ms (see the service's log): ${JSON.stringify(events.map(({ seq, type }) => `${seq} ${type}`))}`,
          );
        await sleep(100);
      }
    };

    /**
     * `count` progress reports, report n on task n % tasks, by `reporters` reporters that each send
     * their next once their last was answered: the round trips, the wall time of all, and how many
     * the service took.
     */
    const reportInTurn = async (
      log: Log,
      count: number,
      messageOf: (n: number) => string,
      deliveries: Deliveries,
      reporterCount = reporters,
    ): Promise<Sample & { taken: number }> => {
      const latencies: number[] = [];
      let taken = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: reporterCount }, async (_, reporter) => {
          for (let n = reporter; n < count; n += reporterCount) {
            const sent = deliveries.sent(messageOf(n));
            if (await progress(log.taskIds[n % log.taskIds.length], messageOf(n), n / count)) taken += 1;
            latencies.push(performance.now() - sent);
          }
        }),
      );
      return { latencies, wallSeconds: (performance.now() - started) / 1000, taken };
    };

    /** `count` streams of the log, each having received it as it stands. */
    const subscribe = async (log: Log, count: number, deliveries: Deliveries): Promise<SseSubscriber[]> => {
      const subscribers: SseSubscriber[] = [];
      for (let batch = 0; batch < count; batch += 25) {
        const some = await Promise.all(
          Array.from({ length: Math.min(25, count - batch) }, () =>
            SseSubscriber.open(
              `${baseUrl}${log.path}/events`,
              { 'x-api-key': adminKey },
              streams,
              log.idOf,
              deliveries.onEvent,
            ),
          ),
        );
        subscribers.push(...some);
        opened.push(...some);
      }
      const lastSeq = (await logOf(log)).at(-1)!.seq;
      if (!(await until(() => subscribers.every((subscriber) => subscriber.lastSeq >= lastSeq), DRAIN_MS)))
        throw new Error(`${log.path}: the streams did not replay the log up to seq ${lastSeq}`);
      return subscribers;
    };

    /** Ends every task with a completed report; the log's streams end after its last ending event. */
    const complete = async ({ taskIds }: Log) => {
      await Promise.all(taskIds.map((taskId) => report(taskId, { status: 'completed', result: { ok: true } })));
    };

    /**
     * Whether every subscriber got every event of the stored log exactly once, in seq order, and the
     * server ended its stream after the ending events; failures as text.
     */
    const check = async (
      name: string,
      log: Log,
      subscribers: SseSubscriber[],
      progressReports: number,
    ): Promise<string[]> => {
      const failures: string[] = [];
      const streamsEnded = await Promise.race([
        Promise.all(subscribers.map((subscriber) => subscriber.ended)).then(() => true),
        sleep(DRAIN_MS).then(() => false),
      ]);
      if (!streamsEnded) failures.push(`${name}: streams still open ${DRAIN_MS} ms after the last task ended`);
      // With no stream to wait for, the workflows' records of the ends are waited for here.
      let stored = await logOf(log);
      const deadline = performance.now() + DRAIN_MS;
      while (
        stored.filter((event) => event.type === 'completed').length < tasksPerLog &&
        performance.now() < deadline
      ) {
        await sleep(100);
        stored = await logOf(log);
      }
      const expected = stored.map((event) => `${event.seq} ${event.taskId} ${event.type}`);
      const progressEvents = stored.filter((event) => event.type === 'progress').length;
      if (progressEvents !== progressReports)
        failures.push(`${name}: the stored log holds ${progressEvents} progress events for ${progressReports} reports`);
      if (stored.some((event, index) => event.seq !== index + 1))
        failures.push(`${name}: the stored log's seqs are not 1..${stored.length}`);
      const ends = stored.filter((event) => event.type === 'completed').length;
      if (ends !== tasksPerLog)
        failures.push(`${name}: the stored log holds ${ends} completed events for ${tasksPerLog} tasks`);
      subscribers.forEach((subscriber, index) => {
        const received = subscriber.events.map((event) => `${event.seq} ${event.taskId} ${event.type}`);
        const seen = new Set<number>();
        let twice = 0;
        for (const event of subscriber.events) {
          if (seen.has(event.seq)) twice += 1;
          seen.add(event.seq);
        }
        const outOfOrder = subscriber.events.filter(
          (event, at) => at > 0 && event.seq <= subscriber.events[at - 1].seq,
        ).length;
        const missing = stored.filter((event) => !seen.has(event.seq)).length;
        const differs = received.length !== expected.length || received.some((line, at) => line !== expected[at]);
        if (differs || subscriber.badIds.length > 0 || !subscriber.endedByServer)
          failures.push(
            `${name}, subscriber ${index}: ${received.length} events for ${expected.length} stored: ${missing} missing, ${twice} twice, ${outOfOrder} out of order, ${subscriber.badIds.length} ids not <taskId>:<seq>, stream ended by the server: ${subscriber.endedByServer}`,
          );
      });
      return failures;
    };

    const pids = {
      'Temporal dev server': servers[0].pid!,
      FerretDB: servers[1].pid!,
      service: service.pid,
      'bench process': process.pid,
    };
    const processNames = Object.keys(pids);
    const addCpu = (into: Record<string, number>, cpuMs: Record<string, number>) => {
      for (const [name, ms] of Object.entries(cpuMs)) into[name] = (into[name] ?? 0) + ms;
    };
    const cpuRow = (label: string, cpu: Record<string, number>, reports: number, seconds: number) => {
      const perReport = processNames.map((name) => (cpu[name] ?? 0) / reports);
      const total = perReport.reduce((a, b) => a + b, 0);
      return `| ${label} | ${perReport.map((ms) => fixed(ms, 2)).join(' | ')} | ${fixed(total, 2)} | ${fixed((total * reports) / 1000 / seconds, 2)} |`;
    };
    const failures: string[] = [];
    const progressLine = (line: string) => process.stdout.write(`${line}\n`);

    // Warm-up: connections, caches and the JIT, on a log of its own.
    {
      const warm = await compose();
      const deliveries = new Deliveries();
      const warmStreams = await subscribe(warm, 10, deliveries);
      const { taken } = await reportInTurn(warm, 200, (n) => `warm:${n}`, deliveries);
      await complete(warm);
      failures.push(...(await check('warm-up', warm, warmStreams, taken)));
      for (const subscriber of warmStreams) subscriber.close();
    }

    // (1) Throughput: the reporters post progress as fast as the answers come, on a log without
    // streams (the baseline: the same reports, nobody reading them) and on one that SUBSCRIBERS
    // streams read.
    const throughputVariants = ['alone', 'streamed'] as const;
    type ThroughputVariant = (typeof throughputVariants)[number];
    const throughput = Object.fromEntries(
      throughputVariants.map((variant) => [
        variant,
        {
          reports: 0,
          taken: 0,
          postSeconds: 0,
          postLatencies: [] as number[],
          deliveries: 0,
          deliverySeconds: 0,
          deliveryDelays: [] as number[],
          drainMs: [] as number[],
          slowestSubscriberRate: Infinity,
          cpu: {},
          cpuSeconds: 0,
        },
      ]),
    ) as Record<
      ThroughputVariant,
      {
        reports: number;
        taken: number;
        postSeconds: number;
        postLatencies: number[];
        deliveries: number;
        deliverySeconds: number;
        deliveryDelays: number[];
        drainMs: number[];
        slowestSubscriberRate: number;
        cpu: Record<string, number>;
        cpuSeconds: number;
      }
    >;
    const perRound = THROUGHPUT_REPORTS / ROUNDS;
    let lastStreamed: Log | undefined;
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const variant of throughputVariants) {
        const figures = throughput[variant];
        const log = await compose();
        const deliveries = new Deliveries();
        const subscribers = variant === 'streamed' ? await subscribe(log, SUBSCRIBERS, deliveries) : [];
        const cpuStarted = performance.now();
        const { result, cpuMs } = await cpuDuring(pids, async () => {
          const started = performance.now();
          const taken = await reportInTurn(log, perRound, (n) => `${variant}:${round}:${n}`, deliveries);
          const answered = performance.now();
          const drained = await until(
            () => subscribers.every((subscriber) => deliveries.count(subscriber) >= taken.taken),
            DRAIN_MS,
          );
          return { taken, started, answered, drained };
        });
        figures.cpuSeconds += (performance.now() - cpuStarted) / 1000;
        figures.reports += perRound;
        figures.taken += result.taken.taken;
        figures.postSeconds += result.taken.wallSeconds;
        figures.postLatencies.push(...result.taken.latencies);
        addCpu(figures.cpu, cpuMs);
        if (variant === 'streamed') {
          if (!result.drained)
            failures.push(`throughput, round ${round}: not every stream received every report within ${DRAIN_MS} ms`);
          const arrivals = subscribers.map((subscriber) => deliveries.lastArrival(subscriber) ?? NaN);
          const last = Math.max(...arrivals);
          figures.deliveries += deliveries.total;
          figures.deliverySeconds += (last - result.started) / 1000;
          figures.deliveryDelays.push(...deliveries.delays);
          figures.drainMs.push(last - result.answered);
          subscribers.forEach((subscriber, index) => {
            const rate = deliveries.count(subscriber) / ((arrivals[index] - result.started) / 1000);
            figures.slowestSubscriberRate = Math.min(figures.slowestSubscriberRate, rate);
          });
          lastStreamed = log;
        }
        await complete(log);
        failures.push(...(await check(`throughput, ${variant}, round ${round}`, log, subscribers, result.taken.taken)));
        progressLine(
          `throughput, ${variant}, round ${round}: ${fixed(perRound / result.taken.wallSeconds)} reports/s` +
            (variant === 'streamed' ? `, ${whole(deliveries.total)} deliveries` : ''),
        );
      }
    }

    // (2) Latency: LATENCY_RATE reports a second (below saturation), on three logs: one a
    // poller reads (GET /tasks/{taskId} again and again from the moment the report is sent, until
    // it shows the report), one with one stream, one with SUBSCRIBERS streams.
    const latencyVariants = ['polled', 'stream1', 'stream100'] as const;
    type LatencyVariant = (typeof latencyVariants)[number];
    const latencyLogs = {} as Record<LatencyVariant, Log>;
    const latencyDeliveries = {} as Record<LatencyVariant, Deliveries>;
    const latencyStreams = {} as Record<LatencyVariant, SseSubscriber[]>;
    for (const variant of latencyVariants) {
      latencyLogs[variant] = await compose();
      latencyDeliveries[variant] = new Deliveries();
      const count = variant === 'stream1' ? 1 : variant === 'stream100' ? SUBSCRIBERS : 0;
      latencyStreams[variant] = await subscribe(latencyLogs[variant], count, latencyDeliveries[variant]);
    }
    const latency = Object.fromEntries(
      latencyVariants.map((variant) => [
        variant,
        {
          reports: 0,
          taken: 0,
          roundTrips: [] as number[],
          polled: [] as number[],
          notSeen: 0,
          cpu: {},
          cpuSeconds: 0,
        },
      ]),
    ) as Record<
      LatencyVariant,
      {
        reports: number;
        taken: number;
        roundTrips: number[];
        polled: number[];
        notSeen: number;
        cpu: Record<string, number>;
        cpuSeconds: number;
      }
    >;
    // What the processes use with nothing reported, the latency phase's streams open: the share of
    // (2)'s CPU per report that its pace, not its reports, costs.
    const { cpuMs: idleCpu } = await cpuDuring(pids, () => sleep(IDLE_MS));
    const latencyPerRound = LATENCY_REPORTS / ROUNDS;
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const variant of latencyVariants) {
        const figures = latency[variant];
        const log = latencyLogs[variant];
        const deliveries = latencyDeliveries[variant];
        const subscribers = latencyStreams[variant];
        const cpuStarted = performance.now();
        const { cpuMs, result: drained } = await cpuDuring(pids, async () => {
          // The answer to each task's last report: the next report on the task waits for it (late if need be).
          const answeredLast = new Map<string, Promise<void>>();
          await atFixedRate(latencyPerRound, LATENCY_RATE, async (n) => {
            const taskId = log.taskIds[n % tasksPerLog];
            // Numbered across rounds: a poller takes a later report on the task as this one seen too.
            const number = round * latencyPerRound + n;
            const message = `${variant}:${number}`;
            const before = answeredLast.get(taskId);
            let answered!: () => void;
            answeredLast.set(taskId, new Promise<void>((resolve) => (answered = resolve)));
            await before;
            const sent = deliveries.sent(message);
            let refusedHere = false;
            const posted = progress(taskId, message, n / latencyPerRound)
              .then((ok) => {
                figures.roundTrips.push(performance.now() - sent);
                if (ok) figures.taken += 1;
                else refusedHere = true;
              })
              .finally(answered);
            if (variant === 'polled') {
              let seen = false;
              while (!seen && !refusedHere && performance.now() - sent < POLL_GIVE_UP_MS) {
                const task = (await api('GET', `/tasks/${taskId}`)) as { message?: string };
                if (Number(task.message?.split(':')[1] ?? -1) >= number) {
                  seen = true;
                  figures.polled.push(performance.now() - sent);
                }
              }
              if (!seen && !refusedHere) figures.notSeen += 1;
            }
            await posted;
          });
          return until(
            () => subscribers.every((subscriber) => deliveries.count(subscriber) >= figures.taken),
            DRAIN_MS,
          );
        });
        figures.cpuSeconds += (performance.now() - cpuStarted) / 1000;
        figures.reports += latencyPerRound;
        addCpu(figures.cpu, cpuMs);
        if (!drained)
          failures.push(
            `latency, ${variant}, round ${round}: not every stream received every report within ${DRAIN_MS} ms`,
          );
        progressLine(`latency, ${variant}, round ${round}: done`);
      }
    }
    for (const variant of latencyVariants) {
      await complete(latencyLogs[variant]);
      failures.push(
        ...(await check(`latency, ${variant}`, latencyLogs[variant], latencyStreams[variant], latency[variant].taken)),
      );
    }

    // (3) A stream opened on an ended log with ?after= its last seq, which gives no event: what
    // reading the whole log costs a stream whose log no stream of this process reads; beside
    // ?format=json (the same read) and one GET /tasks/{taskId}.
    const longLog = lastStreamed!;
    const longLogEvents = await logOf(longLog);
    const lastSeq = longLogEvents.at(-1)!.seq;
    const timed = async (job: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let n = 0; n < LOG_READS; n += 1) {
        const started = performance.now();
        await job();
        times.push(performance.now() - started);
      }
      return percentile(times, 0.5);
    };
    const emptyStream = await timed(async () => {
      const subscriber = await SseSubscriber.open(
        `${baseUrl}${longLog.path}/events?after=${lastSeq}`,
        { 'x-api-key': adminKey },
        streams,
        longLog.idOf,
      );
      await subscriber.ended;
      if (subscriber.events.length > 0) failures.push(`?after=${lastSeq} gave ${subscriber.events.length} events`);
    });
    const jsonRead = await timed(() => logOf(longLog));
    const taskRead = await timed(() => api('GET', `/tasks/${longLog.taskIds[0]}`));

    // Figures.
    const alone = throughput.alone;
    const streamed = throughput.streamed;
    // Reports the service took, per second.
    const aloneRate = alone.taken / alone.postSeconds;
    const streamedRate = streamed.taken / streamed.postSeconds;
    const refusedCount = [...refused.values()].reduce((a, b) => a + b, 0);
    if (refusedCount > 0)
      failures.push(
        `${refusedCount} progress reports refused; the service's errors: ${[...serviceErrors(service.logFile)]
          .map(([message, count]) => `${count} × ${message}`)
          .join('; ')}`,
      );
    const deliveredRate = streamed.deliveries / streamed.deliverySeconds;
    const perSubscriberRate = deliveredRate / SUBSCRIBERS;
    const load = os.loadavg();
    const lines: string[] = [
      `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, load average ${load
        .map((value) => value.toFixed(1))
        .join(' ')} at the end; ${new Date().toISOString().slice(0, 10)}`,
      '',
      `(1) Throughput: ${reporters} reporter${reporters === 1 ? '' : 's'} (${reporters === tasksPerLog ? 'one per task' : `on ${tasksPerLog} task${tasksPerLog === 1 ? '' : 's'}`}, each waiting for its last answer) ${reporters === 1 ? 'posts' : 'post'} progress reports (${THROUGHPUT_REPORTS} per row, ${ROUNDS} rounds alternating, a ${logName} per round) as fast as the answers come;`,
      `"alone": nobody reads the log's events; "${SUBSCRIBERS} streams": ${SUBSCRIBERS} SSE subscribers of it (GET ${ownLogs ? '/tasks/{taskId}' : '/compositions/{compositionId}'}/events). Deliveries: progress events received by all subscribers,`,
      'over the time from the first report sent to the last delivery. Delay: from a report sent to its event received, every delivery.',
      '',
      '| log | reports/s | report p50 ms | report p99 ms | deliveries/s | per subscriber /s | slowest subscriber /s | delay p50 ms | delay p99 ms | last delivery after last answer ms |',
      '|---|---|---|---|---|---|---|---|---|---|',
      `| alone | ${fixed(aloneRate)} | ${fixed(percentile(alone.postLatencies, 0.5))} | ${fixed(percentile(alone.postLatencies, 0.99))} | | | | | | |`,
      `| ${SUBSCRIBERS} streams | ${fixed(streamedRate)} | ${fixed(percentile(streamed.postLatencies, 0.5))} | ${fixed(percentile(streamed.postLatencies, 0.99))} | ${whole(deliveredRate)} | ${fixed(perSubscriberRate)} | ${fixed(streamed.slowestSubscriberRate)} | ${fixed(percentile(streamed.deliveryDelays, 0.5))} | ${fixed(percentile(streamed.deliveryDelays, 0.99))} | ${streamed.drainMs.map((ms) => fixed(ms, 0)).join(', ')} |`,
      '',
      `Reports/s with ${SUBSCRIBERS} streams / alone: ${fixed((100 * streamedRate) / aloneRate, 0)} %. Events per subscriber per second / reports per second: ${fixed((100 * perSubscriberRate) / streamedRate, 0)} %.`,
      '',
    ];
    const roundTrip = (variant: LatencyVariant) => latency[variant].roundTrips;
    const polledBase = latency.polled.polled;
    const baseRoundTrip = roundTrip('polled');
    const latencyRow = (label: string, variant: LatencyVariant, seen: number[], extra = '') => {
      const own = roundTrip(variant);
      return `| ${label} | ${latency[variant].reports} | ${seen.length} | ${fixed(percentile(own, 0.5))} | ${fixed(percentile(own, 0.99))} | ${fixed(percentile(seen, 0.5))} | ${fixed(percentile(seen, 0.99))} | ${fixed(percentile(seen, 0.5) - percentile(own, 0.5))} | ${ratio(percentile(seen, 0.5) / percentile(baseRoundTrip, 0.5))} | ${ratio(percentile(seen, 0.99) / percentile(baseRoundTrip, 0.99))} | ${ratio(percentile(seen, 0.5) / percentile(polledBase, 0.5))} | ${ratio(percentile(seen, 0.99) / percentile(polledBase, 0.99))} |${extra}`;
    };
    const per100 = latencyDeliveries.stream100.perReport();
    lines.push(
      `(2) Latency: ${LATENCY_RATE} reports/s at a fixed pace, ${LATENCY_REPORTS} per row in ${ROUNDS} rounds alternating the rows, each row on a ${logName} of its own`,
      `(the ${SUBSCRIBERS} streams of the last row stay open throughout). "Seen": from the report sent to the moment the client has it: for "polled", a GET /tasks/{taskId}`,
      'answer showing its message (GETs one after another from the moment the report is sent); for a stream, the progress event received (every delivery).',
      "Baselines, same run: the report's round trip (POST sent → 200) with no stream open (the \"polled\" row's), and the poller's delay.",
      '',
      '| client | reports | seen | report round trip p50 ms | p99 | seen p50 ms | seen p99 ms | seen − own round trip, p50 ms | p50 / round trip | p99 / round trip | p50 / polled | p99 / polled |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|',
      latencyRow('polled: GET /tasks/{taskId} in a loop', 'polled', polledBase),
      latencyRow('1 stream', 'stream1', latencyDeliveries.stream1.delays),
      latencyRow(`${SUBSCRIBERS} streams, every delivery`, 'stream100', latencyDeliveries.stream100.delays),
      latencyRow(`${SUBSCRIBERS} streams, each report's first delivery`, 'stream100', per100.first),
      latencyRow(`${SUBSCRIBERS} streams, each report's last delivery`, 'stream100', per100.last),
      '',
      `Reports the poller did not see within ${POLL_GIVE_UP_MS} ms: ${latency.polled.notSeen}.`,
      `Reports refused: (1) ${throughputVariants.map((variant) => `${variant} ${throughput[variant].reports - throughput[variant].taken} of ${throughput[variant].reports}`).join(', ')}; (2) ${latencyVariants.map((variant) => `${variant} ${latency[variant].reports - latency[variant].taken} of ${latency[variant].reports}`).join(', ')}${[...refused].map(([why, count]) => `\n- ${count} × ${why}`).join('')}`,
      '',
      `CPU per report in ms, by process (user + system time from \`/proc\`, over each measurement and its drain); cores: the total over the measurement's wall time.`,
      '',
      `| measurement | ${processNames.join(' | ')} | total | cores |`,
      `|---|${processNames.map(() => '---|').join('')}---|---|`,
      cpuRow('(1) alone', alone.cpu, alone.reports, alone.cpuSeconds),
      cpuRow(`(1) ${SUBSCRIBERS} streams`, streamed.cpu, streamed.reports, streamed.cpuSeconds),
      ...latencyVariants.map((variant) =>
        cpuRow(`(2) ${variant}`, latency[variant].cpu, latency[variant].reports, latency[variant].cpuSeconds),
      ),
      cpuRow(
        `idle, per ${1000 / LATENCY_RATE} ms (one report's share of (2)'s pace)`,
        idleCpu,
        (IDLE_MS / 1000) * LATENCY_RATE,
        IDLE_MS / 1000,
      ),
      '',
      `(3) On the ended log of (1)'s last "${SUBSCRIBERS} streams" ${logName} (${longLogEvents.length} events), median of ${LOG_READS}: a stream opened with ?after=${lastSeq} (no event to give) ends after ${fixed(emptyStream)} ms;`,
      `GET ?format=json of it takes ${fixed(jsonRead)} ms; GET /tasks/{taskId} ${fixed(taskRead)} ms (${ratio(emptyStream / taskRead)} and ${ratio(jsonRead / taskRead)} of it).`,
      '',
    );
    const p99At100 = percentile(latencyDeliveries.stream100.delays, 0.99);
    lines.push(
      '## Summary',
      '',
      `- Throughput: ${whole(deliveredRate)} events/s delivered to ${SUBSCRIBERS} subscribers (${fixed(perSubscriberRate)} each) at ${fixed(streamedRate)} reports/s, ${fixed((100 * streamedRate) / aloneRate, 0)} % of the ${fixed(aloneRate)} reports/s with no stream open.`,
      `- Report → event p99 at ${SUBSCRIBERS} subscribers: ${fixed(p99At100)} ms (goal < ${GOAL_P99_MS} ms: ${p99At100 < GOAL_P99_MS ? 'met' : 'MISSED'}); at 1 subscriber ${fixed(percentile(latencyDeliveries.stream1.delays, 0.99))} ms; the report's own round trip p99 ${fixed(percentile(baseRoundTrip, 0.99))} ms, the poller's p99 ${fixed(percentile(polledBase, 0.99))} ms.`,
      failures.length === 0
        ? '- Every subscriber received every event of its log exactly once, in seq order, and its stream ended after the last ending event.'
        : `- FAILED checks (${failures.length}):\n${failures
            .slice(0, 30)
            .map((failure) => `  - ${failure}`)
            .join('\n')}${failures.length > 30 ? `\n  - … and ${failures.length - 30} more` : ''}`,
      '',
    );
    process.stdout.write(`\n${lines.join('\n')}`);
    if (failures.length > 0) process.exitCode = 1;
    succeeded = true;
  } catch (error) {
    process.stderr.write(`servers' logs kept in ${local.runDir}\n${firstServiceError(service.logFile)}`);
    throw error;
  } finally {
    for (const subscriber of opened) subscriber.close();
    await calls.close();
    await streams.close();
    await agentServer.close();
    await local.stop();
    // After the stop: the service checkpoints FerretDB's log in the run's folder as it stops.
    if (succeeded) fs.rmSync(local.runDir, { recursive: true, force: true });
  }
}

/** The errors of the service log's lines at warn or above, shortened, with how often each came. */
function serviceErrors(logFile: string): Map<string, number> {
  const errors = new Map<string, number>();
  const lines = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n') : [];
  for (const line of lines) {
    let entry: {
      level?: number;
      msg?: string;
      err?: { message?: string };
      error?: { message?: string; errmsg?: string; errorResponse?: { errmsg?: string } };
    };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue; // Not a JSON line: the banner.
    }
    const error =
      entry.err?.message ?? entry.error?.message ?? entry.error?.errmsg ?? entry.error?.errorResponse?.errmsg;
    if ((entry.level ?? 0) < 40 || error === undefined) continue;
    const message = `${entry.msg ?? ''}: ${error.slice(0, 300).replace(/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}/g, '<id>')}`;
    errors.set(message, (errors.get(message) ?? 0) + 1);
  }
  return errors;
}

/** The service log's first error: why a task may be stuck. */
function firstServiceError(logFile: string): string {
  const [first] = serviceErrors(logFile).keys();
  return first === undefined ? '' : `the service's first error: ${first}\n`;
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
