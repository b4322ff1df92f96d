// bench/fair-reads: one caller's list loop against another caller's lookups, on the stack as `npm
// start` runs it (its default limits), with 2 000 agents and 1 000 public rooms.
//
//   npx tsx bench/fair-reads/run.ts [seconds of each loaded phase, default 30]   (about 2.5 minutes)
//
// A second caller (caller B, an agent's key) looks up one agent, then one room, by id, one request
// every 20 ms at most (within its read budget), in four phases: alone (10 s each); while caller A
// (another agent's key) runs 16 loops of `GET /agents?limit=200`; while 16 loops without a
// credential run `GET /rooms?limit=200`. It prints B's p50 and max per phase, and what the loops got
// (pages answered, 429s).
import { startLocalStack } from '../../test/support/local-stack';

const AGENTS = 2_000;
const ROOMS = 1_000;
const LOOPS = 16;
const PAGE = 200;
const FILL_CONCURRENCY = 8;
const LOADED_MS = Number(process.argv[2] ?? 30) * 1_000;
const ALONE_MS = 10_000;
/** B's pace: 3 000 lookups a minute at most, half the default read budget. */
const LOOKUP_EVERY_MS = 20;

interface Reply {
  status: number;
  body: any;
}

async function api(baseUrl: string, method: string, path: string, apiKey?: string, body?: unknown): Promise<Reply> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(apiKey ? { 'x-api-key': apiKey } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text };
}

/** A page of a loop: its status only, the body read and dropped unparsed, so that the loops spend little CPU of their own. */
async function status(baseUrl: string, path: string, apiKey?: string): Promise<number> {
  const response = await fetch(`${baseUrl}${path}`, { headers: apiKey ? { 'x-api-key': apiKey } : {} });
  await response.arrayBuffer();
  return response.status;
}

/** Runs `count` jobs, `concurrency` at a time. */
async function inParallel<T>(count: number, concurrency: number, job: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await job(index);
      }
    }),
  );
  return results;
}

async function created(reply: Promise<Reply>): Promise<any> {
  const { status, body } = await reply;
  if (status !== 201) throw new Error(`expected 201, got ${status}: ${JSON.stringify(body)}`);
  return body;
}

const percentile = (sorted: number[], share: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))];

/** B's lookups, one at a time, until `until`; latencies in ms and the statuses seen. */
async function lookups(until: number, lookup: () => Promise<Reply>) {
  const times: number[] = [];
  const statuses = new Map<number, number>();
  while (Date.now() < until) {
    const start = performance.now();
    const { status } = await lookup();
    const took = performance.now() - start;
    times.push(took);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (took < LOOKUP_EVERY_MS) await new Promise((resolve) => setTimeout(resolve, LOOKUP_EVERY_MS - took));
  }
  times.sort((a, b) => a - b);
  return { count: times.length, p50: percentile(times, 0.5), max: times[times.length - 1], statuses };
}

/** `LOOPS` loops of `page` until `until`: how many pages each status got. */
async function loops(until: number, page: () => Promise<number>) {
  const statuses = new Map<number, number>();
  await Promise.all(
    Array.from({ length: LOOPS }, async () => {
      while (Date.now() < until) {
        const status = await page();
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  return statuses;
}

const show = (statuses: Map<number, number>) =>
  [...statuses].map(([status, count]) => `${count} × ${status}`).join(', ') || 'none';

async function main(): Promise<void> {
  const local = await startLocalStack({
    runDirPrefix: 'acs-fair-reads-',
    database: 'acs_fair_reads',
    env: {
      LOG_LEVEL: 'warn',
      // The stack's test settings raise the per-address limits; this bench runs with the defaults.
      RATE_LIMIT_ANONYMOUS_REQUESTS: '300',
      RATE_LIMIT_AUTH_FAILURES: '20',
    },
  });
  const { baseUrl, adminKey } = local.stack;
  try {
    const started = Date.now();
    const agents = await inParallel(AGENTS, FILL_CONCURRENCY, (index) =>
      created(
        api(baseUrl, 'POST', '/agents', adminKey, {
          name: `Bench agent ${index}`,
          description: 'Answers at once',
          defaultPrompt: 'Hi',
          mcpUrl: 'http://127.0.0.1:9/mcp',
          chatUrl: 'http://127.0.0.1:9/chat',
          capabilities: {
            tools: [{ name: 'echo', description: 'Returns its text', inputSchema: { type: 'object' } }],
          },
        }),
      ),
    );
    const rooms = await inParallel(ROOMS, FILL_CONCURRENCY, (index) =>
      created(api(baseUrl, 'POST', '/rooms', adminKey, { name: `Bench room ${index}` })),
    );
    console.log(`${AGENTS} agents and ${ROOMS} rooms stored in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    const [callerA, callerB] = [agents[0].apiKey as string, agents[1].apiKey as string];
    const agentId = agents[AGENTS - 1].agentId as string;
    const roomId = rooms[ROOMS - 1].id as string;
    const lookupAgent = () => api(baseUrl, 'GET', `/agents/${agentId}`, callerB);
    const lookupRoom = () => api(baseUrl, 'GET', `/rooms/${roomId}`, callerB);
    // Both pages answer in full before the phases: the directories are read whole once per process.
    for (const path of [`/agents?limit=${PAGE}`, `/rooms?limit=${PAGE}`]) {
      const { status, body } = await api(baseUrl, 'GET', path, adminKey);
      if (status !== 200 || body.length !== PAGE) throw new Error(`GET ${path}: ${status}, ${body.length} entries`);
    }

    const rows: string[] = [];
    const row = (phase: string, lookup: string, result: Awaited<ReturnType<typeof lookups>>, load: string) =>
      rows.push(
        `| ${phase} | ${lookup} | ${result.count} (${show(result.statuses)}) | ${result.p50.toFixed(1)} | ${result.max.toFixed(1)} | ${load} |`,
      );
    const phase = async (
      name: string,
      load: ((until: number) => Promise<Map<number, number>>) | undefined,
      lookup: [string, () => Promise<Reply>],
    ) => {
      const until = Date.now() + (load ? LOADED_MS : ALONE_MS);
      const [result, statuses] = await Promise.all([lookups(until, lookup[1]), load?.(until)]);
      row(name, lookup[0], result, statuses ? show(statuses) : '');
      console.log(rows[rows.length - 1]);
    };
    await phase('alone', undefined, ['`GET /agents/{id}`', lookupAgent]);
    await phase('alone', undefined, ['`GET /rooms/{id}`', lookupRoom]);
    await phase(
      `${LOOPS} loops of caller A`,
      (until) => loops(until, () => status(baseUrl, `/agents?limit=${PAGE}`, callerA)),
      ['`GET /agents/{id}`', lookupAgent],
    );
    await phase(`${LOOPS} anonymous loops`, (until) => loops(until, () => status(baseUrl, `/rooms?limit=${PAGE}`)), [
      '`GET /rooms/{id}`',
      lookupRoom,
    ]);
    console.log(
      `\n${ALONE_MS / 1000} s alone, ${LOADED_MS / 1000} s per loaded phase\n\n| phase | caller B's lookup | lookups (statuses) | p50 (ms) | max (ms) | the loops' pages |\n|---|---|---|---|---|---|`,
    );
    console.log(rows.join('\n'));
  } finally {
    await local.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
