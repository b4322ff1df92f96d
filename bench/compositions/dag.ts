// bench/compositions: a composition of 10 levels of 10 tasks, each waiting for the whole level before
// it, against its critical path: ten times one task alone, measured in the same run on the same
// service. Starts its own stack as `npm start` runs (API and worker in one process), with a trivial
// agent on loopback. Also prints where a level's time goes (level-times.ts) and the CPU each process
// spent per task, alone and in the DAG. Run: npx tsx bench/compositions/dag.ts [runs]
import type { Dispatcher } from 'undici';
import { startLocalStack } from '../../test/support/local-stack';
import { benchAgentRegistration, startTrivialAgent } from '../tasks/agent-call';
import { cpuDuring } from '../tasks/process-cpu';
import { api } from '../tasks/service-api';
import { taskTimes, type LoggedEvent, type TaskTimes } from './level-times';

const LEVELS = 10;
const WIDTH = 10;
/** Tasks run first, unmeasured: connections, caches and the workflow bundle warm up. */
const WARM_UP = 20;
/** Tasks alone, each after a pause in which the last one's workflow finishes, as bench/tasks measures them. */
const ALONE = 40;
const ALONE_PAUSE_MS = 150;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (sorted: number[]) =>
  (sorted[Math.floor((sorted.length - 1) / 2)] + sorted[Math.ceil((sorted.length - 1) / 2)]) / 2;
const medianOf = (values: number[]) => median([...values].sort((a, b) => a - b));
/** `{process: ms}` per task, as one line. */
const perTask = (cpuMs: Record<string, number>, tasks: number) =>
  Object.entries(cpuMs)
    .map(([name, ms]) => `${name} ${(ms / tasks).toFixed(1)}`)
    .join(', ');

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 6);
  const local = await startLocalStack({
    runDirPrefix: 'acs-dag-',
    database: 'acs_dag',
    tunedSqlite: true,
    env: { LOG_LEVEL: 'warn' },
  });
  const agentServer = await startTrivialAgent();
  try {
    const { baseUrl, adminKey } = local.stack;
    const pids = {
      'Temporal dev server': local.processes[0].pid!,
      FerretDB: local.processes[1].pid!,
      service: local.service.pid,
      'bench process': process.pid,
    };
    const call = (method: Dispatcher.HttpMethod, route: string, body?: unknown) =>
      api(baseUrl, adminKey, method, route, body);
    const agent = await call('POST', '/agents', benchAgentRegistration(agentServer.url));
    const ended = async (taskId: string) => {
      while ((await call('GET', `/tasks/${taskId}?waitMs=30000`)).status === 'pending');
    };
    const task = async () => {
      const { taskId } = await call('POST', '/tasks', {
        agentId: agent.agentId,
        operation: 'tools/echo',
        params: { text: 'alone' },
      });
      await ended(taskId);
    };
    for (let n = 0; n < WARM_UP; n++) await task();
    const alone: number[] = [];
    const aloneCpu = await cpuDuring(pids, async () => {
      for (let n = 0; n < ALONE; n++) {
        await sleep(ALONE_PAUSE_MS);
        const begun = performance.now();
        await task();
        alone.push(performance.now() - begun);
      }
    });
    const composition = Array.from({ length: LEVELS * WIDTH }, (_, position) => {
      const level = Math.floor(position / WIDTH);
      const parents =
        level === 0 ? [] : Array.from({ length: WIDTH }, (_unused, column) => String((level - 1) * WIDTH + column));
      return { agentId: agent.agentId, operation: 'tools/echo', params: { text: `dag-${position}` }, parents };
    });
    const dags: number[] = [];
    const times: TaskTimes[] = [];
    const composeAnswers: number[] = [];
    const dagCpu: Record<string, number> = {};
    for (let run = 0; run < runs; run++) {
      const { result: created, cpuMs } = await cpuDuring(pids, async () => {
        const begun = performance.now();
        const reply: Array<{ compositionId: string; taskId: string }> = await call(
          'POST',
          '/tasks/compose',
          composition,
        );
        composeAnswers.push(performance.now() - begun);
        // The last level ends last: each of its tasks is waited for as a task alone is, by `_id`.
        // GET /compositions/{id} in a loop would read every task of the store on FerretDB, whose
        // only index is `_id`, each time, and take the cores from the DAG.
        await Promise.all(reply.slice(-WIDTH).map(({ taskId }) => ended(taskId)));
        dags.push(performance.now() - begun);
        const { status } = await call('GET', `/compositions/${reply[0].compositionId}`);
        if (status !== 'completed') throw new Error(`composition ${reply[0].compositionId} ended ${status}`);
        // The workflow's last task and the records after the last one end within the pause.
        await sleep(ALONE_PAUSE_MS * 4);
        return reply;
      });
      for (const [name, ms] of Object.entries(cpuMs)) dagCpu[name] = (dagCpu[name] ?? 0) + ms;
      const events: LoggedEvent[] = await call('GET', `/compositions/${created[0].compositionId}/events?format=json`);
      times.push(
        ...taskTimes(
          events,
          created.map(({ taskId }) => taskId),
          WIDTH,
        ),
      );
    }
    const timesOf = (first: boolean, of: (times: TaskTimes) => number) =>
      medianOf(times.filter(({ level }) => (level === 0) === first).map(of)).toFixed(0);
    const taskP50 = median(alone.sort((a, b) => a - b));
    const dagMedian = median(dags.sort((a, b) => a - b));
    process.stdout.write(
      `One task alone: p50 ${taskP50.toFixed(1)} ms (critical path ${(LEVELS * taskP50).toFixed(0)} ms).\n` +
        `${LEVELS} x ${WIDTH} DAG, ${runs} runs: ${dags.map((ms) => ms.toFixed(0)).join(', ')} ms; ` +
        `median ${dagMedian.toFixed(0)} ms, ${(dagMedian / (LEVELS * taskP50)).toFixed(2)} x its critical path.\n` +
        `Medians: POST /tasks/compose answered ${medianOf(composeAnswers).toFixed(0)} ms; ` +
        `first level, created -> started ${timesOf(true, (t) => t.orchestration)} ms, ` +
        `started -> completed ${timesOf(true, (t) => t.call)} ms; ` +
        `a dependant, last parent completed -> started ${timesOf(false, (t) => t.orchestration)} ms, ` +
        `started -> completed ${timesOf(false, (t) => t.call)} ms.\n` +
        `CPU ms per task alone (its pause included): ${perTask(aloneCpu.cpuMs, ALONE)}.\n` +
        `CPU ms per task of the DAG (its pause included): ${perTask(dagCpu, runs * LEVELS * WIDTH)}.\n`,
    );
  } finally {
    await agentServer.close();
    await local.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
