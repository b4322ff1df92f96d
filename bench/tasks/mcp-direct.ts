// bench/tasks, MCP alone: what one MCP call costs its caller and its agent, without the service.
// No Temporal, no store: the service's own call code (src/agent-calls/mcp-call.ts) from this process
// against the bench's MCP agent in a child process, beside the signed POST of (a).
// Run: npx tsx bench/tasks/mcp-direct.ts [--profile]
import inspector from 'node:inspector/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import os from 'node:os';
import { directCaller, directMcpCaller, reusedMcpSession, startTrivialAgent } from './agent-call';
import { startMcpAgent, type McpRequestRecord } from './mcp-agent';
import { cpuMsOf } from './process-cpu';
import { sample, type Sample } from './sample';

const CONCURRENCY = [1, 10];
const CALLS = 600;
/** The variants alternate in this many rounds, so a change in the machine's speed falls on all alike. */
const ROUNDS = 3;
const PROFILE_CALLS = 1_000;

type Variant = 'acs' | 'mcp' | 'mcpReused';
const LABELS: Record<Variant, string> = {
  acs: '(a) signed POST',
  mcp: '(a′) MCP, a session per call',
  mcpReused: '(a″) MCP, one session kept',
};

interface CallSample extends Sample {
  callerCpuMs: number;
  agentCpuMs: number;
  records: McpRequestRecord[];
}

const now = () => performance.timeOrigin + performance.now();

async function main(): Promise<void> {
  const profile = process.argv.includes('--profile');
  const acsAgent = await startTrivialAgent();
  const mcpAgent = await startMcpAgent();
  const reused = await reusedMcpSession(mcpAgent.url);
  try {
    const calls: Record<Variant, (text: string) => Promise<unknown>> = {
      acs: directCaller(acsAgent.url, 'whsec_YmVuY2g='),
      mcp: directMcpCaller(mcpAgent.url),
      mcpReused: (text) => reused.call(text),
    };
    // Warm up the connections, the SDK's schemas and the JIT.
    for (const variant of Object.keys(calls) as Variant[])
      for (let n = 0; n < 50; n += 1) await calls[variant](`warm-${n}`);
    await mcpAgent.takeRecords();

    if (profile) {
      await profileCalls(calls);
      return;
    }

    const rows: string[] = [];
    const requestRows: string[] = [];
    let timeline = '';
    for (const concurrency of CONCURRENCY) {
      const samples: Record<Variant, CallSample[]> = { acs: [], mcp: [], mcpReused: [] };
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const variant of Object.keys(calls) as Variant[]) {
          const call = calls[variant];
          const begun: Record<string, number> = {};
          const taken = await callSample(CALLS / ROUNDS, concurrency, mcpAgent.pid, (n) => {
            const text = `${variant}-${concurrency}-${round}-${n}`;
            begun[text] = now();
            return call(text);
          });
          taken.records = await mcpAgent.takeRecords();
          samples[variant].push(taken);
          if (concurrency === 1 && variant === 'mcp') timeline = sessionTimeline(taken.records, begun);
        }
      }
      for (const variant of Object.keys(calls) as Variant[]) {
        const all = samples[variant];
        const latencies = all.flatMap((one) => one.latencies).sort((a, b) => a - b);
        const wall = all.reduce((sum, one) => sum + one.wallSeconds, 0);
        const caller = all.reduce((sum, one) => sum + one.callerCpuMs, 0) / latencies.length;
        const agent = all.reduce((sum, one) => sum + one.agentCpuMs, 0) / latencies.length;
        const at = (share: number) => latencies[Math.min(latencies.length - 1, Math.floor(share * latencies.length))];
        // The signed POST's agent runs in this process: its CPU is in the caller's.
        rows.push(
          `| ${LABELS[variant]} | ${concurrency} | ${(latencies.length / wall).toFixed(0)} | ${at(0.5).toFixed(2)} | ${at(0.99).toFixed(2)} | ${caller.toFixed(2)} | ${variant === 'acs' ? '' : agent.toFixed(2)} |`,
        );
        if (variant !== 'acs') {
          const records = all.flatMap((one) => one.records);
          const count = (filter: (record: McpRequestRecord) => boolean) =>
            (records.filter(filter).length / latencies.length).toFixed(2);
          requestRows.push(
            `| ${LABELS[variant]} | ${concurrency} | ${count(() => true)} | ${count((r) => r.rpcMethod === 'initialize')} | ${count((r) => r.rpcMethod === 'notifications/initialized')} | ${count((r) => r.httpMethod === 'GET')} | ${count((r) => r.rpcMethod === 'tools/call')} | ${count((r) => r.httpMethod === 'DELETE')} |`,
          );
        }
      }
      process.stdout.write(`${rows.slice(-3).join('\n')}\n`);
    }

    const report = [
      `Direct calls, ${CALLS} per variant and concurrency in ${ROUNDS} alternating rounds: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}.`,
      'CPU per call in ms: the caller (this process, and for (a) its agent too) and the MCP agent (a child process).',
      '',
      '| variant | concurrency | calls/s | p50 ms | p99 ms | caller CPU | MCP agent CPU |',
      '|---|---|---|---|---|---|---|',
      ...rows,
      '',
      'HTTP requests the MCP agent got, per call:',
      '',
      '| variant | concurrency | all | initialize | notifications/initialized | GET (SSE stream) | tools/call | DELETE |',
      '|---|---|---|---|---|---|---|---|',
      ...requestRows,
      '',
      timeline,
      '',
    ].join('\n');
    process.stdout.write(`\n${report}\n`);
  } finally {
    await reused.close();
    await mcpAgent.close();
    await acsAgent.close();
  }
}

/** Runs `total` calls, `concurrency` at a time, with the CPU of this process and of the MCP agent. */
async function callSample(
  total: number,
  concurrency: number,
  agentPid: number,
  job: (n: number) => Promise<unknown>,
): Promise<CallSample> {
  const [callerBefore, agentBefore] = [cpuMsOf(process.pid), cpuMsOf(agentPid)];
  const { latencies, wallSeconds } = await sample(total, concurrency, job);
  // The session per call ends with a DELETE whose GET stream closes a moment later: its CPU is the call's.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return {
    latencies,
    wallSeconds,
    callerCpuMs: cpuMsOf(process.pid) - callerBefore,
    agentCpuMs: cpuMsOf(agentPid) - agentBefore,
    records: [],
  };
}

/**
 * Where one call with a session of its own spends its time, calls one at a time: mean ms after the
 * call began, of each request's arrival at the agent and of its answer, and when the call returned.
 */
function sessionTimeline(records: McpRequestRecord[], begun: Record<string, number>): string {
  const bySession = new Map<string, McpRequestRecord[]>();
  for (const record of records) {
    if (record.sessionId === undefined) continue;
    bySession.set(record.sessionId, [...(bySession.get(record.sessionId) ?? []), record]);
  }
  const steps = [
    ['initialize', (r: McpRequestRecord) => r.rpcMethod === 'initialize'],
    ['notifications/initialized', (r: McpRequestRecord) => r.rpcMethod === 'notifications/initialized'],
    ['GET (SSE stream)', (r: McpRequestRecord) => r.httpMethod === 'GET'],
    ['tools/call', (r: McpRequestRecord) => r.rpcMethod === 'tools/call'],
    ['DELETE', (r: McpRequestRecord) => r.httpMethod === 'DELETE'],
  ] as const;
  const sums = steps.map(() => ({ arrived: 0, answered: 0, count: 0 }));
  let sessions = 0;
  for (const session of bySession.values()) {
    const text = session.find((record) => record.text !== undefined)?.text;
    const start = text === undefined ? undefined : begun[text];
    if (start === undefined) continue;
    sessions += 1;
    steps.forEach(([, matches], index) => {
      const record = session.find(matches);
      if (!record) return;
      sums[index].arrived += record.arrivedAt - start;
      // The GET stream stays open until the session ends.
      sums[index].answered += (record.answeredAt ?? record.arrivedAt) - start;
      sums[index].count += 1;
    });
  }
  const mean = (sum: number, count: number) => (count === 0 ? '' : (sum / count).toFixed(2));
  return [
    `(a′) at concurrency 1, ${sessions} calls: mean ms after the call began, at the MCP agent (the GET stream closes when the session ends).`,
    '',
    '| request | arrived | answered | requests per call |',
    '|---|---|---|---|',
    ...steps.map(
      ([name], index) =>
        `| ${name} | ${mean(sums[index].arrived, sums[index].count)} | ${mean(sums[index].answered, sums[index].count)} | ${(sums[index].count / Math.max(1, sessions)).toFixed(2)} |`,
    ),
  ].join('\n');
}

/** Self time by place (packageOf) of PROFILE_CALLS calls, one at a time, and the process's CPU over them. */
async function profileOf(
  call: (text: string) => Promise<unknown>,
): Promise<{ cpuMs: number; byPlace: Map<string, number> }> {
  const session = new inspector.Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  const cpuBefore = cpuMsOf(process.pid);
  for (let n = 0; n < PROFILE_CALLS; n += 1) await call(`profile-${n}`);
  const cpuMs = cpuMsOf(process.pid) - cpuBefore;
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  const byPlace = new Map<string, number>();
  const timeDeltas = profile.timeDeltas ?? [];
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  (profile.samples ?? []).forEach((id, index) => {
    const node = nodes.get(id)!;
    const place = packageOf(node.callFrame.url, node.callFrame.functionName);
    if (place !== '(idle)') byPlace.set(place, (byPlace.get(place) ?? 0) + (timeDeltas[index] ?? 0) / 1000);
  });
  return { cpuMs, byPlace };
}

/** CPU profiles of this process over each variant's calls, one at a time: self time per call by place. */
async function profileCalls(calls: Record<Variant, (text: string) => Promise<unknown>>): Promise<void> {
  const variants = Object.keys(calls) as Variant[];
  const profiles: Awaited<ReturnType<typeof profileOf>>[] = [];
  for (const variant of variants) profiles.push(await profileOf(calls[variant]));
  const total = (byPlace: Map<string, number>) => [...byPlace.values()].reduce((sum, ms) => sum + ms, 0);
  // Places over 1 % of (a′)'s sampled time, the rest in one line.
  const reference = profiles[variants.indexOf('mcp')].byPlace;
  const shown = [...reference.entries()]
    .filter(([, ms]) => ms >= total(reference) / 100)
    .sort((a, b) => b[1] - a[1])
    .map(([place]) => place);
  const perCall = (ms: number) => (ms / PROFILE_CALLS).toFixed(3);
  const cell = (byPlace: Map<string, number>, place: string) => perCall(byPlace.get(place) ?? 0);
  const rest = (byPlace: Map<string, number>) =>
    perCall([...byPlace.entries()].filter(([place]) => !shown.includes(place)).reduce((sum, [, ms]) => sum + ms, 0));
  // What every new SDK Client costs before it sends anything.
  const clientsBefore = cpuMsOf(process.pid);
  for (let n = 0; n < PROFILE_CALLS; n += 1) new Client({ name: 'bench', version: '1' }, { capabilities: {} });
  const clientMs = (cpuMsOf(process.pid) - clientsBefore) / PROFILE_CALLS;
  process.stdout.write(
    [
      `CPU profiles of the caller, ${PROFILE_CALLS} calls of each variant one at a time (the MCP agent is another process; the signed POST's is`,
      'this one). Self time per call in ms, by package or Node module; CPU per call from process.cpuUsage (all threads).',
      '',
      `| where | ${variants.map((variant) => LABELS[variant]).join(' | ')} |`,
      `|---|${variants.map(() => '---|').join('')}`,
      `| CPU per call | ${profiles.map(({ cpuMs }) => perCall(cpuMs)).join(' | ')} |`,
      `| sampled busy on the main thread | ${profiles.map(({ byPlace }) => perCall(total(byPlace))).join(' | ')} |`,
      ...shown.map((place) => `| ${place} | ${profiles.map(({ byPlace }) => cell(byPlace, place)).join(' | ')} |`),
      `| the rest | ${profiles.map(({ byPlace }) => rest(byPlace)).join(' | ')} |`,
      '',
      `\`new Client()\` of the SDK (a new Ajv with its formats each): ${clientMs.toFixed(3)} ms CPU each.`,
      '',
    ].join('\n'),
  );
}

/** Where a sampled frame is: its package, Node's module (node:internal/webstreams, say), or a native function. */
function packageOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : `native: ${functionName || 'anonymous'}`;
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inModules) return inModules[1];
  if (url.startsWith('node:internal/deps/')) return url.split('/').slice(0, 3).join('/');
  if (url.startsWith('node:internal/')) return url.split('/').slice(0, 2).join('/').replace(/\.js$/, '');
  if (url.startsWith('node:')) return url.replace(/\.js$/, '');
  if (url.includes('/src/') || url.includes('/activities/')) return 'the service (src, activities)';
  if (/^[0-9a-f]+$/.test(url) || url.startsWith('wasm')) return 'WebAssembly (llhttp)';
  return url.replace(/^.*\//, '');
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
