// bench/tasks/a2a.ts: what calling the agent over A2A costs a task, against the same task on an `acs`
// agent in the same run. Starts its own stack (as bench/tasks/run.ts does) and two agents in this
// process that answer at once: (c) the service's signed POST, (e) an A2A agent of @a2a-js/sdk's own
// server (test/support/a2a-agent.ts) whose SendMessage answers a completed task.
// Run: npx tsx bench/tasks/a2a.ts
import { A2aTestAgent } from '../../test/support/a2a-agent';
import { startLocalStack } from '../../test/support/local-stack';
import { ECHO_TOOL, startTrivialAgent } from './agent-call';
import { sample, summarise, type Sample } from './sample';
import { api } from './service-api';

const CONCURRENCY = [1, 10, 50];
const TASKS_AT = (concurrency: number) => Math.max(200, concurrency * 8);
/** (c) and (e) alternate in this many rounds per concurrency, so a change in the machine's speed falls on both. */
const ROUNDS = 2;
const WAIT_MS = 30_000;

async function main(): Promise<void> {
  const local = await startLocalStack({
    runDirPrefix: 'acs-bench-a2a-',
    database: 'acs_bench',
    tunedSqlite: true,
    env: { LOG_LEVEL: 'warn' },
  });
  const acsAgent = await startTrivialAgent();
  const a2aAgent = await A2aTestAgent.start({ echo: 'echo' });
  try {
    const { baseUrl, adminKey } = local.stack;
    const register = (fields: Record<string, unknown>) =>
      api(baseUrl, adminKey, 'POST', '/agents', {
        description: 'Answers at once',
        defaultPrompt: 'Hi',
        capabilities: { tools: [ECHO_TOOL] },
        ...fields,
      });
    const acs = await register({ name: 'Bench agent', mcpUrl: acsAgent.url, chatUrl: acsAgent.url });
    // Capabilities given by hand, as for (c): registration does not read the card.
    const a2a = await register({
      name: 'Bench A2A agent',
      protocol: 'a2a',
      mcpUrl: a2aAgent.endpoint,
      chatUrl: a2aAgent.url,
    });
    /** POST /tasks, then GET /tasks/{taskId}?waitMs= until it ended. */
    const runTask = async (agentId: unknown) => {
      const { taskId } = await api(baseUrl, adminKey, 'POST', '/tasks', {
        agentId,
        operation: 'tools/echo',
        params: { text: 'bench' },
      });
      for (;;) {
        const task = await api(baseUrl, adminKey, 'GET', `/tasks/${String(taskId)}?waitMs=${WAIT_MS}`);
        if (task.status === 'completed') return;
        if (task.status !== 'pending') throw new Error(`task ${String(taskId)} ended ${String(task.status)}`);
      }
    };
    // Warm both paths: the workflow bundle, connections, the agents' first answers.
    await sample(20, 2, () => runTask(acs.agentId));
    await sample(20, 2, () => runTask(a2a.agentId));

    const rows: string[] = [];
    for (const concurrency of CONCURRENCY) {
      const samples = { c: [] as Sample[], e: [] as Sample[] };
      const perRound = Math.ceil(TASKS_AT(concurrency) / ROUNDS);
      for (let round = 0; round < ROUNDS; round += 1) {
        samples.c.push(await sample(perRound, concurrency, () => runTask(acs.agentId)));
        samples.e.push(await sample(perRound, concurrency, () => runTask(a2a.agentId)));
      }
      const [c, e] = [summarise(samples.c), summarise(samples.e)];
      rows.push(
        `| ${concurrency} | ${perRound * ROUNDS} | ${c.throughput.toFixed(1)} | ${c.p50.toFixed(1)} | ${c.p99.toFixed(1)} | ${e.throughput.toFixed(1)} | ${e.p50.toFixed(1)} | ${e.p99.toFixed(1)} | ${Math.round((100 * e.throughput) / c.throughput)} % | ${(e.p50 - c.p50).toFixed(1)} |`,
      );
    }
    console.log(
      [
        '| concurrency | tasks | (c) tasks/s | (c) p50 | (c) p99 | (e) tasks/s | (e) p50 | (e) p99 | (e)/(c) throughput | (e)−(c) p50 |',
        '|---|---|---|---|---|---|---|---|---|---|',
        ...rows,
      ].join('\n'),
    );
  } finally {
    await Promise.all([acsAgent.close(), a2aAgent.close()]);
    await local.stop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
