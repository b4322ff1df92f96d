// bench/tasks: what the router adds over a bare Temporal workflow and over calling the agent directly.
// Starts its own stack (Temporal dev server with WAL + synchronous=normal, FerretDB, the service as
// `npm start` runs it) on free loopback ports. Run: npx tsx bench/tasks/run.ts [--write] [--sqlite-defaults]
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { request, type Dispatcher } from 'undici';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { WORKFLOW_TASK_SLOTS } from '../../src/tasks/task-worker';
import { cpuDuring } from './process-cpu';
import { startLocalStack } from '../../test/support/local-stack';
import { directCaller, startTrivialAgent } from './agent-call';
import type { bareLocalTaskWorkflow, bareTaskWorkflow } from './bare-workflow';

const MONGO_DATABASE = 'acs_bench';

const CONCURRENCY = [1, 10, 50];
/** At least 200 tasks: with 80 at concurrency 10, the p50 of one run moved by tens of ms from run to run. */
const TASKS_AT = (concurrency: number) => Math.max(200, concurrency * 8);
/** How long one lookup of (c) waits for the task to end (GET /tasks/{taskId}?waitMs=). */
const WAIT_MS = 30_000;
const DAG_POLL_MS = 100;
const DAG_LEVELS = 10;
const DAG_WIDTH = 10;
const BARE_QUEUE = 'bench-bare';

/** (b), (b′) and (c) alternate in this many rounds per concurrency, so a change in the machine's speed falls on all alike. */
const ROUNDS = 2;
/**
 * Tasks run one at a time, each after a pause in which the last one's workflow finishes: the latency
 * the router adds to a task, apart from the CPU it shares with the tasks around it.
 */
const ALONE_TASKS = 60;
const ALONE_PAUSE_MS = 150;
/** Longest wait for the service's workflows to finish before a round starts. */
const DRAIN_MS = 60_000;

interface Measurement {
  throughput: number;
  p50: number;
  p99: number;
}

/** Latencies and wall time of some runs of one job, gathered over rounds. */
interface Sample {
  latencies: number[];
  wallSeconds: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `total` jobs, `concurrency` at a time; latencies in ms and jobs per second over the wall time. */
async function measure(total: number, concurrency: number, job: (n: number) => Promise<unknown>): Promise<Measurement> {
  return summarise([await sample(total, concurrency, job)]);
}

async function sample(total: number, concurrency: number, job: (n: number) => Promise<unknown>): Promise<Sample> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const n = next++;
        const begun = performance.now();
        await job(n);
        latencies.push(performance.now() - begun);
      }
    }),
  );
  return { latencies, wallSeconds: (performance.now() - started) / 1000 };
}

/** Latencies of `total` jobs run one at a time, each after a pause of ALONE_PAUSE_MS. */
async function aloneSample(total: number, job: (n: number) => Promise<unknown>): Promise<Sample> {
  const latencies: number[] = [];
  for (let n = 0; n < total; n += 1) {
    await sleep(ALONE_PAUSE_MS);
    const begun = performance.now();
    await job(n);
    latencies.push(performance.now() - begun);
  }
  // The pauses are not the jobs' time.
  return { latencies, wallSeconds: latencies.reduce((sum, ms) => sum + ms, 0) / 1000 };
}

function summarise(samples: Sample[]): Measurement {
  const latencies = samples.flatMap((one) => one.latencies).sort((a, b) => a - b);
  const wallSeconds = samples.reduce((sum, one) => sum + one.wallSeconds, 0);
  const at = (share: number) => latencies[Math.min(latencies.length - 1, Math.floor(share * latencies.length))];
  return { throughput: latencies.length / wallSeconds, p50: at(0.5), p99: at(0.99) };
}

/**
 * One API call with undici's `request`, as (a) calls the agent: `fetch` costs the bench process about
 * 1.3 ms more CPU per call, taken from the same two cores as the service under test.
 */
async function api(
  baseUrl: string,
  adminKey: string,
  method: Dispatcher.HttpMethod,
  route: string,
  body?: unknown,
): Promise<any> {
  const response = await request(`${baseUrl}${route}`, {
    method,
    headers: { 'x-api-key': adminKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = await response.body.json();
  if (response.statusCode >= 300)
    throw new Error(`${method} ${route} answered ${response.statusCode}: ${JSON.stringify(parsed)}`);
  return parsed;
}

async function main(): Promise<void> {
  const write = process.argv.includes('--write');
  // The comparison the issue asks for: the same run on the dev server's SQLite defaults.
  const tunedSqlite = !process.argv.includes('--sqlite-defaults');
  const local = await startLocalStack({
    runDirPrefix: 'acs-bench-',
    database: MONGO_DATABASE,
    tunedSqlite,
    env: { LOG_LEVEL: 'warn' },
  });
  const { stack, service, runDir, processes: servers } = local;
  const agentServer = await startTrivialAgent();
  Runtime.install({ logger: new DefaultLogger('WARN') });
  // One native connection for (b)'s client and worker, as the service shares one: both start eagerly.
  const connection = await NativeConnection.connect({ address: stack.temporalAddress });
  try {
    const { baseUrl, adminKey } = stack;
    const agent = await api(baseUrl, adminKey, 'POST', '/agents', {
      name: 'Bench agent',
      description: 'Answers at once',
      defaultPrompt: 'Hi',
      mcpUrl: agentServer.url,
      chatUrl: agentServer.url,
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
    const direct = directCaller(agentServer.url, agent.signingSecret);
    const client = new Client({ connection });
    const worker = await Worker.create({
      connection,
      taskQueue: BARE_QUEUE,
      workflowsPath: require.resolve('./bare-workflow'),
      activities: { callAgentOnce: direct },
      // As many slots as the service's worker has, so that both start eagerly as often.
      maxConcurrentWorkflowTaskExecutions: WORKFLOW_TASK_SLOTS,
    });

    // Where the time of one task goes, summed over the runs at concurrency 1 (ms since POST /tasks was sent).
    const profile = { accepted: 0, agentCalled: 0, indexedCompleted: 0, observed: 0, runs: 0 };
    let profiling = false;
    const viaRouter = async () => {
      const sent = Date.now();
      const { taskId } = await api(baseUrl, adminKey, 'POST', '/tasks', {
        agentId: agent.agentId,
        operation: 'tools/echo',
        params: { text: 'bench' },
      });
      const accepted = Date.now();
      for (;;) {
        const task = await api(baseUrl, adminKey, 'GET', `/tasks/${taskId}?waitMs=${WAIT_MS}`);
        if (task.status === 'completed') {
          if (profiling) {
            profile.accepted += accepted - sent;
            profile.agentCalled += agentServer.receivedAt.get(taskId)! - sent;
            profile.indexedCompleted += Date.parse(task.updatedAt) - sent;
            profile.observed += Date.now() - sent;
            profile.runs += 1;
          }
          return;
        }
        if (task.status !== 'pending')
          throw new Error(`task ${taskId} ended ${task.status}: ${JSON.stringify(task.error)}`);
      }
    };
    const bare = (taskId: string) =>
      client.workflow.execute<typeof bareTaskWorkflow>('bareTaskWorkflow', {
        taskQueue: BARE_QUEUE,
        workflowId: `bare-${randomUUID()}`,
        args: [taskId],
        requestEagerStart: true,
      });
    const bareLocal = (taskId: string) =>
      client.workflow.execute<typeof bareLocalTaskWorkflow>('bareLocalTaskWorkflow', {
        taskQueue: BARE_QUEUE,
        workflowId: `bare-local-${randomUUID()}`,
        args: [taskId],
        requestEagerStart: true,
      });

    const rows: string[] = [];
    const localRows: string[] = [];
    // CPU per task of each process, for (b), (b′) and (c) at each concurrency: the bench process runs
    // the bare workflows' worker and client, the agent and (c)'s HTTP client.
    const pids = {
      'Temporal dev server': servers[0].pid!,
      FerretDB: servers[1].pid!,
      service: service.pid,
      'bench process': process.pid,
    };
    const cpuRows: string[] = [];
    // (c) reports a task completed before its workflow finished; the rest of that work is waited
    // for before the next round, and counted in (c)'s CPU but not in its time.
    const drained = async () => {
      const deadline = Date.now() + DRAIN_MS;
      while ((await client.workflow.count(`ExecutionStatus = "Running"`)).count > 0 && Date.now() < deadline)
        await sleep(50);
    };
    const variants = ['b', 'bLocal', 'c'] as const;
    const labels = { b: '(b)', bLocal: '(b′)', c: '(c)' };
    const measureInRounds = async (
      concurrency: number,
      total: number,
      jobs: Record<(typeof variants)[number], (n: number) => Promise<unknown>>,
    ) => {
      const samples = { b: [] as Sample[], bLocal: [] as Sample[], c: [] as Sample[] };
      const cpu = {
        b: {} as Record<string, number>,
        bLocal: {} as Record<string, number>,
        c: {} as Record<string, number>,
      };
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const variant of variants) {
          await drained();
          const { result, cpuMs } = await cpuDuring(pids, async () => {
            const taken = await sample(total / ROUNDS, concurrency, (n) => jobs[variant](round * (total / ROUNDS) + n));
            await drained();
            return taken;
          });
          samples[variant].push(result);
          for (const [name, ms] of Object.entries(cpuMs)) cpu[variant][name] = (cpu[variant][name] ?? 0) + ms;
        }
      }
      for (const variant of variants) {
        const perTask = Object.keys(pids).map((name) => cpu[variant][name] / total);
        const sum = perTask.reduce((a, b) => a + b, 0);
        cpuRows.push(
          `| ${labels[variant]} | ${concurrency} | ${perTask.map((ms) => (variant !== 'c' && ms < 0.05 ? '' : ms.toFixed(1))).join(' | ')} | ${sum.toFixed(1)} |`,
        );
      }
      return { b: summarise(samples.b), bLocal: summarise(samples.bLocal), c: summarise(samples.c) };
    };
    const bareProfile = { agentCalled: 0, observed: 0, runs: 0 };
    let aloneRow = '';
    let dagLine = '';
    await worker.runUntil(async () => {
      // Warm up connections, the workflow bundle's caches and the schema cache.
      await measure(10, 2, (n) => direct(`warm-${n}`));
      await measure(10, 2, (n) => bare(`warm-bare-${n}`));
      await measure(10, 2, (n) => bareLocal(`warm-bare-local-${n}`));
      await measure(10, 2, viaRouter);
      for (const concurrency of CONCURRENCY) {
        const total = TASKS_AT(concurrency);
        const a = await measure(total, concurrency, (n) => direct(`direct-${concurrency}-${n}`));
        profiling = concurrency === 1;
        const { b, bLocal, c } = await measureInRounds(concurrency, total, {
          b: async (n) => {
            const sent = Date.now();
            const taskId = `bare-${concurrency}-${n}`;
            await bare(taskId);
            if (profiling) {
              bareProfile.agentCalled += agentServer.receivedAt.get(taskId)! - sent;
              bareProfile.observed += Date.now() - sent;
              bareProfile.runs += 1;
            }
          },
          bLocal: (n) => bareLocal(`bare-local-${concurrency}-${n}`),
          c: viaRouter,
        });
        profiling = false;
        const format = (m: Measurement) => `${m.throughput.toFixed(1)} | ${m.p50.toFixed(1)} | ${m.p99.toFixed(1)}`;
        rows.push(
          `| ${concurrency} | ${total} | ${format(a)} | ${format(b)} | ${format(c)} | ${((100 * c.throughput) / b.throughput).toFixed(0)} % | ${(c.p50 - b.p50).toFixed(1)} |`,
        );
        localRows.push(
          `| ${concurrency} | ${format(bLocal)} | ${((100 * c.throughput) / bLocal.throughput).toFixed(0)} % | ${(c.p50 - bLocal.p50).toFixed(1)} |`,
        );
        process.stdout.write(`${rows[rows.length - 1]}\n${localRows[localRows.length - 1]}\n`);
      }

      const alone = { b: [] as Sample[], bLocal: [] as Sample[], c: [] as Sample[] };
      const aloneJobs = {
        b: (n: number) => bare(`bare-alone-${n}`),
        bLocal: (n: number) => bareLocal(`bare-local-alone-${n}`),
        c: viaRouter,
      };
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const variant of variants)
          alone[variant].push(
            await aloneSample(ALONE_TASKS / ROUNDS, (n) => aloneJobs[variant](round * (ALONE_TASKS / ROUNDS) + n)),
          );
      }
      const [aloneB, aloneBLocal, aloneC] = [summarise(alone.b), summarise(alone.bLocal), summarise(alone.c)];
      const pair = (m: Measurement) => `${m.p50.toFixed(1)} | ${m.p99.toFixed(1)}`;
      aloneRow = `| ${pair(aloneB)} | ${pair(aloneBLocal)} | ${pair(aloneC)} | ${(aloneC.p50 - aloneB.p50).toFixed(1)} | ${(aloneC.p50 - aloneBLocal.p50).toFixed(1)} |`;
      process.stdout.write(`${aloneRow}\n`);

      const composition = Array.from({ length: DAG_LEVELS * DAG_WIDTH }, (_, position) => {
        const level = Math.floor(position / DAG_WIDTH);
        const parents =
          level === 0
            ? []
            : Array.from({ length: DAG_WIDTH }, (_unused, column) => String((level - 1) * DAG_WIDTH + column));
        return { agentId: agent.agentId, operation: 'tools/echo', params: { text: `dag-${position}` }, parents };
      });
      const started = performance.now();
      const [{ compositionId }] = await api(baseUrl, adminKey, 'POST', '/tasks/compose', composition);
      let status = 'pending';
      while (status === 'pending') {
        await sleep(DAG_POLL_MS);
        status = (await api(baseUrl, adminKey, 'GET', `/compositions/${compositionId}`)).status;
      }
      const dagMs = performance.now() - started;
      dagLine = `${DAG_LEVELS * DAG_WIDTH} tasks in ${DAG_LEVELS} levels of ${DAG_WIDTH} (each task waits for the whole previous level): ${status} in ${dagMs.toFixed(0)} ms, ${(dagMs / DAG_LEVELS).toFixed(0)} ms per level of the critical path`;
      process.stdout.write(`${dagLine}\n`);
    });

    const mean = (sum: number) => (sum / profile.runs).toFixed(1);
    const report = [
      '## Tasks',
      '',
      `Measured by \`npx tsx bench/tasks/run.ts\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, the embedded`,
      `Temporal dev server (SQLite${tunedSqlite ? ', WAL, synchronous=normal' : ' with its defaults: rollback journal, synchronous=full'}) and FerretDB, the service as \`npm start\` runs it`,
      '(API and worker in one process), and a trivial agent on loopback that answers `completed` at once.',
      '(a) calls the agent directly with the same signed POST; (b) starts a bare workflow with one activity',
      'making that call, with the Temporal client, and waits for its result; (c) `POST /tasks`, then',
      `\`GET /tasks/{taskId}?waitMs=${WAIT_MS}\` (undici's \`request\`), which answers once the task ended. (b) and (c) both start their workflows`,
      `eagerly: client and worker share one native connection. (b), (b′) and (c) alternate in ${ROUNDS} rounds of 1/${ROUNDS} of the tasks,`,
      'each round starting once no workflow runs. Throughput in tasks/s, latencies in ms.',
      '',
      '| concurrency | tasks | (a) tasks/s | (a) p50 | (a) p99 | (b) tasks/s | (b) p50 | (b) p99 | (c) tasks/s | (c) p50 | (c) p99 | (c)/(b) throughput | (c)−(b) p50 |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      "(b′) is (b) with the call as a local activity, Temporal's cheapest way to make it, which the router used before the Web UI had",
      'to show its calls (issue 17): for reference, not the target.',
      '',
      '| concurrency | (b′) tasks/s | (b′) p50 | (b′) p99 | (c)/(b′) throughput | (c)−(b′) p50 |',
      '|---|---|---|---|---|---|',
      ...localRows,
      '',
      `One task at a time, ${ALONE_TASKS} of each, each after a ${ALONE_PAUSE_MS} ms pause in which the last one's workflow finishes: the latency`,
      'the router adds to a task, apart from the CPU it shares with the work around it (in the tables above, a task of (c) is seen',
      'completed before its workflow finished, and the next one starts while it does). Latencies in ms.',
      '',
      '| (b) p50 | (b) p99 | (b′) p50 | (b′) p99 | (c) p50 | (c) p99 | (c)−(b) p50 | (c)−(b′) p50 |',
      '|---|---|---|---|---|---|---|---|',
      aloneRow,
      '',
      `DAG: ${dagLine}.`,
      '',
      'Where the time of one task goes at concurrency 1 (mean ms after the request was sent):',
      '',
      '| | accepted (202) | agent called | completed in the index | completion observed |',
      '|---|---|---|---|---|',
      `| (b) bare workflow | | ${(bareProfile.agentCalled / bareProfile.runs).toFixed(1)} | | ${(bareProfile.observed / bareProfile.runs).toFixed(1)} |`,
      `| (c) POST /tasks | ${mean(profile.accepted)} | ${mean(profile.agentCalled)} | ${mean(profile.indexedCompleted)} | ${mean(profile.observed)} |`,
      '',
      'CPU per task in ms, by process (user + system time from `/proc`, over each measurement and the wait for its workflows to finish):',
      '',
      `| | concurrency | ${Object.keys(pids).join(' | ')} | total |`,
      `|---|---|${Object.keys(pids)
        .map(() => '---|')
        .join('')}---|`,
      ...cpuRows,
      '',
    ].join('\n');
    process.stdout.write(`\n${report}\n`);
    if (write) writeSection(path.resolve(__dirname, '../../docs/benchmarks.md'), report);
    fs.rmSync(runDir, { recursive: true, force: true });
  } catch (error) {
    process.stderr.write(`servers' logs kept in ${runDir}\n`);
    throw error;
  } finally {
    await connection.close();
    await agentServer.close();
    await local.stop();
  }
}

/** Replaces the "## Tasks" section of the benchmarks document (or appends it), leaving other sections alone. */
function writeSection(file: string, section: string): void {
  const existing = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n\n';
  const start = existing.indexOf('## Tasks\n');
  if (start < 0) {
    fs.writeFileSync(file, `${existing.trimEnd()}\n\n${section}`);
    return;
  }
  const end = existing.indexOf('\n## ', start + 1);
  fs.writeFileSync(
    file,
    existing.slice(0, start) + section.trimEnd() + (end < 0 ? '\n' : `\n\n${existing.slice(end + 1)}`),
  );
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
