// bench/tasks: what the service adds over a bare Temporal workflow and over calling the agent directly,
// what calling the agent over MCP adds to a task, and what calling a task through /mcp adds. Starts its
// own stack (Temporal dev server with WAL + synchronous=normal, FerretDB, the service as `npm start`
// runs it) on free loopback ports.
// Run: npx tsx bench/tasks/run.ts [--write] [--sqlite-defaults] [--tracing]
// --tracing: the service traces every request (OTLP/HTTP protobuf) to a receiver in this process that
// reads and drops the spans, so the cost of tracing, export included, shows against the same run's (b);
// it samples and instruments as OTEL_TRACES_SAMPLER(_ARG) and OTEL_NODE_DISABLED_INSTRUMENTATIONS of the
// bench's environment say (everything by default).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { WORKFLOW_TASK_SLOTS } from '../../src/service/task-worker';
import { cpuDuring } from './process-cpu';
import { sample, summarise, type Measurement, type Sample } from './sample';
import { api } from './service-api';
import { startLocalStack } from '../../test/support/local-stack';
import { benchAgentRegistration, directCaller, ECHO_TOOL, startTrivialAgent } from './agent-call';
import { startMcpAgent, type McpRequestRecord } from './mcp-agent';
import { openMcpClients, type McpClientPool } from './mcp-clients';
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
/** (c)'s tool as /mcp names it: the agent's name in MCP's characters, a dot, the tool. */
const SERVICE_TOOL = 'Bench_agent.echo';

/** (b), (b′), (c), (d) and (e) alternate in this many rounds per concurrency, so a change in the machine's speed falls on all alike. */
const ROUNDS = 2;
/**
 * Tasks run one at a time, each after a pause in which the last one's workflow finishes: the latency
 * the service adds to a task, apart from the CPU it shares with the tasks around it.
 */
const ALONE_TASKS = 60;
const ALONE_PAUSE_MS = 150;
/** Longest wait for the service's workflows to finish before a round starts. */
const DRAIN_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `total` jobs, `concurrency` at a time; latencies in ms and jobs per second over the wall time. */
async function measure(total: number, concurrency: number, job: (n: number) => Promise<unknown>): Promise<Measurement> {
  return summarise([await sample(total, concurrency, job)]);
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

/** The bench's own sampler and instrumentations left out (OTEL_*), for the service to trace as told. */
function sampler(): Record<string, string> {
  const variables = ['OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG', 'OTEL_NODE_DISABLED_INSTRUMENTATIONS'] as const;
  return Object.fromEntries(variables.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : [])));
}

/** An OTLP/HTTP endpoint that reads every export and drops it: the service's tracing does all its work. */
async function startSpanSink(): Promise<{ url: string; exports: () => number }> {
  let exports = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      exports += 1;
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports: () => exports };
}

async function main(): Promise<void> {
  const write = process.argv.includes('--write');
  // The comparison the issue asks for: the same run on the dev server's SQLite defaults.
  const tunedSqlite = !process.argv.includes('--sqlite-defaults');
  const spanSink = process.argv.includes('--tracing') ? await startSpanSink() : undefined;
  const local = await startLocalStack({
    runDirPrefix: 'acs-bench-',
    database: MONGO_DATABASE,
    tunedSqlite,
    env: { LOG_LEVEL: 'warn', ...(spanSink ? { OTEL_EXPORTER_OTLP_ENDPOINT: spanSink.url, ...sampler() } : {}) },
  });
  const { stack, service, runDir, processes: servers } = local;
  let succeeded = false;
  const agentServer = await startTrivialAgent();
  const mcpAgent = await startMcpAgent();
  Runtime.install({ logger: new DefaultLogger('WARN') });
  // One native connection for (b)'s client and worker, as the service shares one: both start eagerly.
  const connection = await NativeConnection.connect({ address: stack.temporalAddress });
  try {
    const { baseUrl, adminKey } = stack;
    const agent = await api(baseUrl, adminKey, 'POST', '/agents', benchAgentRegistration(agentServer.url));
    // The same tool over MCP. Capabilities given by hand: registration does not contact the server.
    const mcpBenchAgent = await api(baseUrl, adminKey, 'POST', '/agents', {
      name: 'Bench MCP agent',
      description: 'Answers at once, over MCP',
      defaultPrompt: 'Hi',
      protocol: 'mcp',
      mcpUrl: mcpAgent.url,
      chatUrl: mcpAgent.url,
      capabilities: { tools: [ECHO_TOOL] },
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
    // (d)'s tasks at concurrency 1: when each was sent, accepted, seen completed, by its tools/call text.
    const mcpProfile = new Map<
      string,
      { sent: number; accepted: number; indexedCompleted: number; observed: number }
    >();
    let profiling = false;
    /** POST /tasks, then GET /tasks/{taskId}?waitMs= until it ended; the times of its steps. */
    const runTask = async (agentId: string, text: string) => {
      const sent = Date.now();
      const { taskId } = await api(baseUrl, adminKey, 'POST', '/tasks', {
        agentId,
        operation: 'tools/echo',
        params: { text },
      });
      const accepted = Date.now();
      for (;;) {
        const task = await api(baseUrl, adminKey, 'GET', `/tasks/${taskId}?waitMs=${WAIT_MS}`);
        if (task.status === 'completed')
          return { taskId, sent, accepted, indexedCompleted: Date.parse(task.updatedAt), observed: Date.now() };
        if (task.status !== 'pending')
          throw new Error(`task ${taskId} ended ${task.status}: ${JSON.stringify(task.error)}`);
      }
    };
    const viaService = async () => {
      const { taskId, sent, accepted, indexedCompleted, observed } = await runTask(agent.agentId, 'bench');
      if (profiling) {
        profile.accepted += accepted - sent;
        profile.agentCalled += agentServer.receivedAt.get(taskId)! - sent;
        profile.indexedCompleted += indexedCompleted - sent;
        profile.observed += observed - sent;
        profile.runs += 1;
      }
    };
    /** (d): the same task on the MCP agent; its text names it in the agent's records. */
    const viaServiceOverMcp = async (text: string) => {
      const { sent, accepted, indexedCompleted, observed } = await runTask(mcpBenchAgent.agentId, text);
      if (profiling) mcpProfile.set(text, { sent, accepted, indexedCompleted, observed });
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
    const mcpRows: string[] = [];
    // CPU per task of each process, for (b), (b′), (c) and (d) at each concurrency: the bench process
    // runs the bare workflows' worker and client, (c)'s agent and the HTTP client of (c) and (d);
    // the MCP agent runs in a process of its own.
    const pids = {
      'Temporal dev server': servers[0].pid!,
      FerretDB: servers[1].pid!,
      service: service.pid,
      'bench process': process.pid,
      'MCP agent': mcpAgent.pid,
    };
    const cpuRows: string[] = [];
    // (c) reports a task completed before its workflow finished; the rest of that work is waited
    // for before the next round, and counted in (c)'s CPU but not in its time.
    const drained = async () => {
      const deadline = Date.now() + DRAIN_MS;
      while ((await client.workflow.count(`ExecutionStatus = "Running"`)).count > 0 && Date.now() < deadline)
        await sleep(50);
    };
    const variants = ['b', 'bLocal', 'c', 'd', 'e'] as const;
    type Variant = (typeof variants)[number];
    const labels = { b: '(b)', bLocal: '(b′)', c: '(c)', d: '(d)', e: '(e)' };
    // What a variant leaves to do after its round (the garbage a process collects later) falls on
    // the variant after it: every other round goes the other way, so no variant always follows the same one.
    const orderOf = (round: number) => (round % 2 === 0 ? variants : [...variants].reverse());
    /** (e) and (f) call through MCP clients opened per concurrency (mcp-clients.ts); (e) on the service's /mcp. */
    let serviceMcp: McpClientPool | undefined;
    const viaMcpServer = (text: string) => serviceMcp!.call(SERVICE_TOOL, text);
    // The MCP agent's requests during (d)'s samples.
    let mcpRecords: McpRequestRecord[] = [];
    const measureInRounds = async (
      concurrency: number,
      total: number,
      jobs: Record<Variant, (n: number) => Promise<unknown>>,
    ) => {
      const samples: Record<Variant, Sample[]> = { b: [], bLocal: [], c: [], d: [], e: [] };
      const cpu: Record<Variant, Record<string, number>> = { b: {}, bLocal: {}, c: {}, d: {}, e: {} };
      mcpRecords = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const variant of orderOf(round)) {
          await drained();
          const { result, cpuMs } = await cpuDuring(pids, async () => {
            const taken = await sample(total / ROUNDS, concurrency, (n) => jobs[variant](round * (total / ROUNDS) + n));
            await drained();
            return taken;
          });
          samples[variant].push(result);
          for (const [name, ms] of Object.entries(cpuMs)) cpu[variant][name] = (cpu[variant][name] ?? 0) + ms;
          const records = await mcpAgent.takeRecords();
          if (variant === 'd') mcpRecords.push(...records);
        }
      }
      for (const variant of variants) {
        const perTask = Object.keys(pids).map((name) => cpu[variant][name] / total);
        const sum = perTask.reduce((a, b) => a + b, 0);
        cpuRows.push(
          `| ${labels[variant]} | ${concurrency} | ${perTask.map((ms) => (ms < 0.05 && ['b', 'bLocal'].includes(variant) ? '' : ms.toFixed(1))).join(' | ')} | ${sum.toFixed(1)} |`,
        );
      }
      return {
        b: summarise(samples.b),
        bLocal: summarise(samples.bLocal),
        c: summarise(samples.c),
        d: summarise(samples.d),
        e: summarise(samples.e),
      };
    };
    const bareProfile = { agentCalled: 0, observed: 0, runs: 0 };
    let aloneRow = '';
    let aloneMcpRow = '';
    let aloneMcpServerRow = '';
    const mcpServerRows: string[] = [];
    let mcpTimeline = '';
    let dagLine = '';
    await worker.runUntil(async () => {
      // Warm up connections, the workflow bundle's caches and the schema cache.
      await measure(10, 2, (n) => direct(`warm-${n}`));
      await measure(10, 2, (n) => bare(`warm-bare-${n}`));
      await measure(10, 2, (n) => bareLocal(`warm-bare-local-${n}`));
      await measure(10, 2, viaService);
      await measure(10, 2, (n) => viaServiceOverMcp(`warm-mcp-${n}`));
      const mcpHeaders = { 'x-api-key': adminKey };
      serviceMcp = await openMcpClients(`${baseUrl}/mcp`, 2, mcpHeaders);
      await measure(10, 2, (n) => viaMcpServer(`warm-mcp-server-${n}`));
      await serviceMcp.close();
      await mcpAgent.takeRecords();
      for (const concurrency of CONCURRENCY) {
        const total = TASKS_AT(concurrency);
        const a = await measure(total, concurrency, (n) => direct(`direct-${concurrency}-${n}`));
        const agentMcp = await openMcpClients(mcpAgent.url, concurrency);
        const f = await measure(total, concurrency, (n) => agentMcp.call(ECHO_TOOL.name, `floor-${concurrency}-${n}`));
        await agentMcp.close();
        await mcpAgent.takeRecords();
        serviceMcp = await openMcpClients(`${baseUrl}/mcp`, concurrency, mcpHeaders);
        profiling = concurrency === 1;
        const { b, bLocal, c, d, e } = await measureInRounds(concurrency, total, {
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
          c: viaService,
          d: (n) => viaServiceOverMcp(`mcp-${concurrency}-${n}`),
          e: (n) => viaMcpServer(`mcp-server-${concurrency}-${n}`),
        });
        await serviceMcp.close();
        if (profiling) mcpTimeline = mcpTaskTimeline(mcpRecords, mcpProfile);
        profiling = false;
        const format = (m: Measurement) => `${m.throughput.toFixed(1)} | ${m.p50.toFixed(1)} | ${m.p99.toFixed(1)}`;
        rows.push(
          `| ${concurrency} | ${total} | ${format(a)} | ${format(b)} | ${format(c)} | ${((100 * c.throughput) / b.throughput).toFixed(0)} % | ${(c.p50 - b.p50).toFixed(1)} |`,
        );
        localRows.push(
          `| ${concurrency} | ${format(bLocal)} | ${((100 * c.throughput) / bLocal.throughput).toFixed(0)} % | ${(c.p50 - bLocal.p50).toFixed(1)} |`,
        );
        const requestsPerTask = mcpRecords.length / total;
        mcpRows.push(
          `| ${concurrency} | ${c.throughput.toFixed(1)} | ${c.p50.toFixed(1)} | ${format(d)} | ${((100 * d.throughput) / c.throughput).toFixed(0)} % | ${(d.p50 - c.p50).toFixed(1)} | ${requestsPerTask.toFixed(2)} |`,
        );
        mcpServerRows.push(
          `| ${concurrency} | ${c.throughput.toFixed(1)} | ${c.p50.toFixed(1)} | ${format(e)} | ${((100 * e.throughput) / c.throughput).toFixed(0)} % | ${(e.p50 - c.p50).toFixed(1)} | ${format(f)} |`,
        );
        process.stdout.write(
          `${rows[rows.length - 1]}\n${localRows[localRows.length - 1]}\n${mcpRows[mcpRows.length - 1]}\n${mcpServerRows[mcpServerRows.length - 1]}\n`,
        );
      }

      const alone: Record<Variant, Sample[]> = { b: [], bLocal: [], c: [], d: [], e: [] };
      serviceMcp = await openMcpClients(`${baseUrl}/mcp`, 1, mcpHeaders);
      const aloneJobs: Record<Variant, (n: number) => Promise<unknown>> = {
        b: (n) => bare(`bare-alone-${n}`),
        bLocal: (n) => bareLocal(`bare-local-alone-${n}`),
        c: viaService,
        d: (n) => viaServiceOverMcp(`mcp-alone-${n}`),
        e: (n) => viaMcpServer(`mcp-server-alone-${n}`),
      };
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const variant of orderOf(round))
          alone[variant].push(
            await aloneSample(ALONE_TASKS / ROUNDS, (n) => aloneJobs[variant](round * (ALONE_TASKS / ROUNDS) + n)),
          );
      }
      await serviceMcp.close();
      await mcpAgent.takeRecords();
      const [aloneB, aloneBLocal, aloneC, aloneD, aloneE] = variants.map((variant) => summarise(alone[variant]));
      const pair = (m: Measurement) => `${m.p50.toFixed(1)} | ${m.p99.toFixed(1)}`;
      aloneRow = `| ${pair(aloneB)} | ${pair(aloneBLocal)} | ${pair(aloneC)} | ${(aloneC.p50 - aloneB.p50).toFixed(1)} | ${(aloneC.p50 - aloneBLocal.p50).toFixed(1)} |`;
      aloneMcpRow = `| ${pair(aloneC)} | ${pair(aloneD)} | ${(aloneD.p50 - aloneC.p50).toFixed(1)} |`;
      aloneMcpServerRow = `| ${pair(aloneC)} | ${pair(aloneE)} | ${(aloneE.p50 - aloneC.p50).toFixed(1)} |`;
      process.stdout.write(`${aloneRow}\n${aloneMcpRow}\n${aloneMcpServerRow}\n`);

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
      `eagerly: client and worker share one native connection. (b), (b′), (c), (d) and (e) alternate in ${ROUNDS} rounds of 1/${ROUNDS} of the tasks, every other round in the reverse order,`,
      'each round starting once no workflow runs. Throughput in tasks/s, latencies in ms.',
      '',
      '| concurrency | tasks | (a) tasks/s | (a) p50 | (a) p99 | (b) tasks/s | (b) p50 | (b) p99 | (c) tasks/s | (c) p50 | (c) p99 | (c)/(b) throughput | (c)−(b) p50 |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      "(b′) is (b) with the call as a local activity, Temporal's cheapest way to make it, which the service",
      'does not use because the Web UI could not show its calls: for reference, not the target.',
      '',
      '| concurrency | (b′) tasks/s | (b′) p50 | (b′) p99 | (c)/(b′) throughput | (c)−(b′) p50 |',
      '|---|---|---|---|---|---|',
      ...localRows,
      '',
      '(d) is (c) on an agent registered with `protocol: "mcp"`: the same tool on an MCP server built with the',
      'official SDK (`McpServer`, `StreamableHTTPServerTransport` on node:http, a session per client), in a process',
      "of its own; the service calls it with the SDK's client. HTTP requests per task: what the MCP agent got, per task of (d).",
      '',
      '| concurrency | (c) tasks/s | (c) p50 | (d) tasks/s | (d) p50 | (d) p99 | (d)/(c) throughput | (d)−(c) p50 | HTTP requests per task |',
      '|---|---|---|---|---|---|---|---|---|',
      ...mcpRows,
      '',
      `One task at a time, ${ALONE_TASKS} of each, each after a ${ALONE_PAUSE_MS} ms pause in which the last one's workflow finishes: the latency`,
      'the service adds to a task, apart from the CPU it shares with the work around it (in the tables above, a task of (c) is seen',
      'completed before its workflow finished, and the next one starts while it does). Latencies in ms.',
      '',
      '| (b) p50 | (b) p99 | (b′) p50 | (b′) p99 | (c) p50 | (c) p99 | (c)−(b) p50 | (c)−(b′) p50 |',
      '|---|---|---|---|---|---|---|---|',
      aloneRow,
      '',
      '| (c) p50 | (c) p99 | (d) p50 | (d) p99 | (d)−(c) p50 |',
      '|---|---|---|---|---|',
      aloneMcpRow,
      '',
      "(e) is (c)'s task called through `/mcp` (`tools/call` of `Bench_agent.echo`) with the official SDK's client,",
      'one client in a session of its own per concurrent caller, opened before the rounds. (f), the floor, is the',
      'same SDK client calling the MCP agent of (d) directly, without the service, measured alone before the rounds.',
      '',
      '| concurrency | (c) tasks/s | (c) p50 | (e) tasks/s | (e) p50 | (e) p99 | (e)/(c) throughput | (e)−(c) p50 | (f) calls/s | (f) p50 | (f) p99 |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...mcpServerRows,
      '',
      'One at a time, as above:',
      '',
      '| (c) p50 | (c) p99 | (e) p50 | (e) p99 | (e)−(c) p50 |',
      '|---|---|---|---|---|',
      aloneMcpServerRow,
      '',
      `DAG: ${dagLine}.`,
      '',
      'Where the time of one task goes at concurrency 1 (mean ms after the request was sent):',
      '',
      '| | accepted (202) | agent called | completed in the task record | completion observed |',
      '|---|---|---|---|---|',
      `| (b) bare workflow | | ${(bareProfile.agentCalled / bareProfile.runs).toFixed(1)} | | ${(bareProfile.observed / bareProfile.runs).toFixed(1)} |`,
      `| (c) POST /tasks | ${mean(profile.accepted)} | ${mean(profile.agentCalled)} | ${mean(profile.indexedCompleted)} | ${mean(profile.observed)} |`,
      '',
      mcpTimeline,
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
    if (spanSink) process.stdout.write(`Tracing on: ${spanSink.exports()} OTLP exports received.\n`);
    // The figures in docs/benchmarks.md are those without tracing; its cost is a section of its own.
    if (write && !spanSink) writeSection(path.resolve(__dirname, '../../docs/benchmarks.md'), report);
    succeeded = true;
  } catch (error) {
    process.stderr.write(`servers' logs kept in ${runDir}\n`);
    throw error;
  } finally {
    await connection.close();
    await agentServer.close();
    await mcpAgent.close();
    await local.stop();
    // After the stop: the service checkpoints FerretDB's log in the run's folder as it stops.
    if (succeeded) fs.rmSync(runDir, { recursive: true, force: true });
  }
}

/**
 * Where the time of one task of (d) goes, tasks one after another: mean ms after POST /tasks was sent
 * of the MCP session's requests at the agent (its arrival; for tools/call and DELETE their answer
 * too), against the task's own steps.
 */
function mcpTaskTimeline(
  records: McpRequestRecord[],
  tasks: Map<string, { sent: number; accepted: number; indexedCompleted: number; observed: number }>,
): string {
  const bySession = new Map<string, McpRequestRecord[]>();
  for (const record of records) {
    if (record.sessionId === undefined) continue;
    bySession.set(record.sessionId, [...(bySession.get(record.sessionId) ?? []), record]);
  }
  const columns = {
    accepted: 0,
    initialize: 0,
    toolsCall: 0,
    toolsCallAnswered: 0,
    deleteAnswered: 0,
    indexedCompleted: 0,
    observed: 0,
  };
  let runs = 0;
  let withSession = 0;
  for (const [text, task] of tasks) {
    const call = records.find((record) => record.text === text && record.rpcMethod === 'tools/call');
    if (!call) continue;
    runs += 1;
    columns.accepted += task.accepted - task.sent;
    columns.toolsCall += call.arrivedAt - task.sent;
    columns.toolsCallAnswered += (call.answeredAt ?? call.arrivedAt) - task.sent;
    columns.indexedCompleted += task.indexedCompleted - task.sent;
    columns.observed += task.observed - task.sent;
    // Calls in a session of their own: its initialize and DELETE are the call's.
    const session = bySession.get(call.sessionId ?? '') ?? [];
    const initialize = session.find((record) => record.rpcMethod === 'initialize');
    const ending = session.find((record) => record.httpMethod === 'DELETE');
    if (initialize && ending && session.filter((record) => record.rpcMethod === 'tools/call').length === 1) {
      withSession += 1;
      columns.initialize += initialize.arrivedAt - task.sent;
      columns.deleteAnswered += (ending.answeredAt ?? ending.arrivedAt) - task.sent;
    }
  }
  const mean = (sum: number, count = runs) => (count === 0 ? '' : (sum / count).toFixed(1));
  return [
    `(d) at concurrency 1, the MCP agent's side (${runs} tasks; the session's requests in ${withSession} of them):`,
    '',
    '| | accepted (202) | initialize arrived | tools/call arrived | tools/call answered | DELETE answered | completed in the task record | completion observed |',
    '|---|---|---|---|---|---|---|---|',
    `| (d) POST /tasks, MCP | ${mean(columns.accepted)} | ${mean(columns.initialize, withSession)} | ${mean(columns.toolsCall)} | ${mean(columns.toolsCallAnswered)} | ${mean(columns.deleteAnswered, withSession)} | ${mean(columns.indexedCompleted)} | ${mean(columns.observed)} |`,
  ].join('\n');
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
