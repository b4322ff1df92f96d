// bench/compositions: a composition of 10 levels of 10 tasks, each waiting for the whole level before
// it, against its critical path: ten times one task alone, measured in the same run on the same
// service. Starts its own stack as `npm start` runs (API and worker in one process), with a trivial
// agent on loopback. Run: npx tsx bench/compositions/dag.ts [runs]
import type { Dispatcher } from 'undici';
import { startLocalStack } from '../../test/support/local-stack';
import { benchAgentRegistration, startTrivialAgent } from '../tasks/agent-call';
import { api } from '../tasks/service-api';

const LEVELS = 10;
const WIDTH = 10;
/** Tasks run first, unmeasured: connections, caches and the workflow bundle warm up. */
const WARM_UP = 20;
/** Tasks alone, each after a pause in which the last one's workflow finishes, as bench/tasks measures them. */
const ALONE = 40;
const ALONE_PAUSE_MS = 150;
/** How often the composition's status is read while it runs: its time is known to within this. */
const POLL_MS = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (sorted: number[]) =>
  (sorted[Math.floor((sorted.length - 1) / 2)] + sorted[Math.ceil((sorted.length - 1) / 2)]) / 2;

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
    const call = (method: Dispatcher.HttpMethod, route: string, body?: unknown) =>
      api(baseUrl, adminKey, method, route, body);
    const agent = await call('POST', '/agents', benchAgentRegistration(agentServer.url));
    const task = async () => {
      const { taskId } = await call('POST', '/tasks', {
        agentId: agent.agentId,
        operation: 'tools/echo',
        params: { text: 'alone' },
      });
      while ((await call('GET', `/tasks/${taskId}?waitMs=30000`)).status === 'pending');
    };
    for (let n = 0; n < WARM_UP; n++) await task();
    const alone: number[] = [];
    for (let n = 0; n < ALONE; n++) {
      await sleep(ALONE_PAUSE_MS);
      const begun = performance.now();
      await task();
      alone.push(performance.now() - begun);
    }
    const composition = Array.from({ length: LEVELS * WIDTH }, (_, position) => {
      const level = Math.floor(position / WIDTH);
      const parents =
        level === 0 ? [] : Array.from({ length: WIDTH }, (_unused, column) => String((level - 1) * WIDTH + column));
      return { agentId: agent.agentId, operation: 'tools/echo', params: { text: `dag-${position}` }, parents };
    });
    const dags: number[] = [];
    for (let run = 0; run < runs; run++) {
      const begun = performance.now();
      const [{ compositionId }] = await call('POST', '/tasks/compose', composition);
      let status = 'pending';
      while (status === 'pending') {
        await sleep(POLL_MS);
        status = (await call('GET', `/compositions/${compositionId}`)).status;
      }
      if (status !== 'completed') throw new Error(`composition ${compositionId} ended ${status}`);
      dags.push(performance.now() - begun);
      await sleep(ALONE_PAUSE_MS * 4);
    }
    const taskP50 = median(alone.sort((a, b) => a - b));
    const dagMedian = median(dags.sort((a, b) => a - b));
    process.stdout.write(
      `One task alone: p50 ${taskP50.toFixed(1)} ms (critical path ${(LEVELS * taskP50).toFixed(0)} ms).\n` +
        `${LEVELS} x ${WIDTH} DAG, ${runs} runs: ${dags.map((ms) => ms.toFixed(0)).join(', ')} ms; ` +
        `median ${dagMedian.toFixed(0)} ms, ${(dagMedian / (LEVELS * taskP50)).toFixed(2)} x its critical path.\n`,
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
