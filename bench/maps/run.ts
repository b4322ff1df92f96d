// bench/maps: (a) a map over 1 000 items of a trivial tool against the same 1 000 tasks started with
// POST /tasks, both 10 at a time, in rounds of alternating order: the map's throughput as a share of
// the tasks'. (b) a map of 10 000 items: its time, and the largest history among its composition's,
// its map's and its chunks' workflows. Starts its own stack as `npm start` runs (API and worker in
// one process), with bench/tasks' trivial agent on loopback.
// Run: npx tsx bench/maps/run.ts [rounds] [--skip-large | --large-only]
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import type { Dispatcher } from 'undici';
import { MAX_ITEMS_PER_CHUNK } from '../../src/config/history-budget';
import { startLocalStack } from '../../test/support/local-stack';
import { planMap } from '../../workflows/map-plan';
import { historyOf } from '../history/history-size';
import { benchAgentRegistration, startTrivialAgent } from '../tasks/agent-call';
import { sample, summarise } from '../tasks/sample';
import { api } from '../tasks/service-api';
import { itemTaskId, workflowIdOfComposition, workflowIdOfMap, workflowIdOfMapChunk } from '../../workflows/task-types';

const ITEMS = 1_000;
const CONCURRENCY = 10;
const LARGE_ITEMS = 10_000;
/**
 * As (a): on two busy cores, 100 at once starved the calls' heartbeats (an item failed, and the map
 * with it), and bought no throughput. At 10 the chunks are the largest the plan makes (250 items),
 * so their histories are the largest a map of this size has.
 */
const LARGE_CONCURRENCY = CONCURRENCY;
/** Tasks run first, unmeasured: connections, caches and the workflow bundle warm up. */
const WARM_UP = 50;
/** Between measurements: the last one's workflows finish before the next starts. */
const SETTLE_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The machine's load averages over 1, 5 and 15 minutes: how busy it was beside the bench. */
const loads = (averages: number[]) => averages.map((load) => load.toFixed(2)).join(', ');

async function main(): Promise<void> {
  const rounds = Number(process.argv.find((argument) => /^\d+$/.test(argument)) ?? 2);
  const skipLarge = process.argv.includes('--skip-large');
  const largeOnly = process.argv.includes('--large-only');
  const loadAtStart = os.loadavg();
  const local = await startLocalStack({
    runDirPrefix: 'acs-maps-',
    database: 'acs_maps',
    tunedSqlite: true,
    env: { LOG_LEVEL: 'warn' },
  });
  const agentServer = await startTrivialAgent();
  const connection = await Connection.connect({ address: local.stack.temporalAddress });
  const client = new Client({ connection, namespace: local.stack.temporalNamespace });
  try {
    const { baseUrl, adminKey } = local.stack;
    const call = (method: Dispatcher.HttpMethod, route: string, body?: unknown) =>
      api(baseUrl, adminKey, method, route, body);
    const agent = await call('POST', '/agents', benchAgentRegistration(agentServer.url));
    const echo = (text: string) => ({ agentId: agent.agentId, operation: 'tools/echo', params: { text } });
    const ended = async (taskId: string) => {
      let task = await call('GET', `/tasks/${taskId}?waitMs=30000`);
      while (task.status === 'pending' || task.status === 'input-required')
        task = await call('GET', `/tasks/${taskId}?waitMs=30000`);
      if (task.status !== 'completed')
        throw new Error(`task ${taskId} ended ${task.status}: ${JSON.stringify(task.error ?? task.map)}`);
      return task;
    };
    const task = async (n: number) => ended((await call('POST', '/tasks', echo(`task-${n}`))).taskId);
    /** A composition of the list's task and a map of echo over it; its time from the POST to the map's end. */
    const map = async (items: number, maxConcurrency: number) => {
      const begun = performance.now();
      const composed = await call('POST', '/tasks/compose', [
        { agentId: agent.agentId, operation: 'tools/echo', params: { list: Array.from({ length: items }, String) } },
        {
          agentId: agent.agentId,
          operation: 'tools/echo',
          parents: ['0'],
          params: { text: { source: { item: true } } },
          forEach: { source: { taskId: '0', field: 'list' }, maxConcurrency },
        },
      ]);
      const mapTaskId: string = composed[1].taskId;
      const view = await ended(mapTaskId);
      if (view.result.results.length !== items) throw new Error(`map ${mapTaskId} has the wrong results`);
      return { seconds: (performance.now() - begun) / 1000, mapTaskId, compositionId: composed[0].compositionId };
    };

    await sample(WARM_UP, CONCURRENCY, task);
    await map(WARM_UP, CONCURRENCY);
    if (!largeOnly) {
      const tasksSamples = [];
      const mapSeconds: number[] = [];
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? ['map', 'tasks'] : ['tasks', 'map'];
        for (const variant of order) {
          await sleep(SETTLE_MS);
          if (variant === 'map') mapSeconds.push((await map(ITEMS, CONCURRENCY)).seconds);
          else tasksSamples.push(await sample(ITEMS, CONCURRENCY, task));
        }
      }
      const tasks = summarise(tasksSamples);
      const mapThroughput = (ITEMS * rounds) / mapSeconds.reduce((sum, seconds) => sum + seconds, 0);
      const lines = [
        `load average at the start: ${loads(loadAtStart)} (${os.cpus().length} cores)`,
        `(a) ${rounds} rounds of ${ITEMS} at concurrency ${CONCURRENCY}:`,
        `    POST /tasks: ${tasks.throughput.toFixed(1)} tasks/s (p50 ${tasks.p50.toFixed(1)} ms)`,
        `    map: ${mapThroughput.toFixed(1)} items/s (${mapSeconds.map((seconds) => seconds.toFixed(1)).join(', ')} s)`,
        `    map / tasks: ${((100 * mapThroughput) / tasks.throughput).toFixed(0)} %`,
        `load average at the end of (a): ${loads(os.loadavg())}`,
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    }

    if (!skipLarge) {
      await sleep(SETTLE_MS);
      const large = await map(LARGE_ITEMS, LARGE_CONCURRENCY);
      const workflows = [workflowIdOfComposition(large.compositionId), workflowIdOfMap(large.mapTaskId)];
      for (const { from, to } of planMap(LARGE_ITEMS, LARGE_CONCURRENCY, MAX_ITEMS_PER_CHUNK).chunks)
        workflows.push(workflowIdOfMapChunk(large.mapTaskId, from, to));
      const histories = await Promise.all(
        workflows.map(async (workflowId) => ({ workflowId, ...(await historyOf(client, workflowId)) })),
      );
      const largest = (by: 'events' | 'bytes') => histories.reduce((most, one) => (one[by] > most[by] ? one : most));
      const last = await call('GET', `/tasks/${itemTaskId(large.mapTaskId, LARGE_ITEMS - 1)}`);
      process.stdout.write(
        [
          `(b) ${LARGE_ITEMS} items at concurrency ${LARGE_CONCURRENCY}: ${large.seconds.toFixed(1)} s, ` +
            `${(LARGE_ITEMS / large.seconds).toFixed(1)} items/s; last item ${last.status}`,
          `    ${histories.length} workflows; most events: ${largest('events').workflowId} ` +
            `${largest('events').events} events, ${largest('events').bytes} bytes; ` +
            `most bytes: ${largest('bytes').workflowId} ${largest('bytes').events} events, ${largest('bytes').bytes} bytes`,
          `    composition: ${histories[0].events} events, ${histories[0].bytes} bytes; ` +
            `map: ${histories[1].events} events, ${histories[1].bytes} bytes ` +
            `(${(histories[1].events / (histories.length - 2)).toFixed(1)} events per chunk)`,
          `load average at the end of (b): ${loads(os.loadavg())}`,
        ].join('\n') + '\n',
      );
    }
  } finally {
    await connection.close();
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
