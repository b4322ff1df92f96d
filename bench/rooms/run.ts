// bench/rooms: one room, 100 connected clients, against the service (auth, storage on FerretDB)
// and against a bare `ws` broadcast server, in the same run on the same machine.
//
//   npx tsx bench/rooms/run.ts            (about a minute; starts its own Temporal dev server and FerretDB)
//
// Measures: messages/s accepted and deliveries/s at saturation (10 senders, 10 messages in flight
// each), delivery latency p50/p99 at a fixed 200 messages/s, and RSS per connection with 1000
// connections. The service runs as `npm start` does, on free ports with its data in a temporary folder.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { freePort } from '../../src/util/ports';

const CLIENTS = 100;
const SENDERS = 10;
const WINDOW = 10;
const SATURATION_MS = 5_000;
const FIXED_RATE = 200;
const FIXED_MS = 10_000;
const MEMORY_CLIENTS = 1_000;
const ROOT = path.resolve(__dirname, '..', '..');

interface Target {
  name: string;
  pid: number;
  /** The socket URL of client `index` (its own identity for the service). */
  url(index: number): Promise<string>;
  /** Content of a client frame carrying `marker`. */
  frame(marker: string): string;
  /** The marker of a received broadcast, or undefined for other frames. */
  marker(text: string): string | undefined;
}

interface Figures {
  acceptedPerSecond: number;
  deliveriesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  fixedDeliveriesPerSecond: number;
  bytesPerConnection: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

function percentile(sorted: number[], fraction: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

async function connectAll(target: Target, count: number, offset = 0): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  for (let batch = 0; batch < count; batch += 50) {
    const opened = await Promise.all(
      Array.from({ length: Math.min(50, count - batch) }, async (_, index) => {
        const ws = new WebSocket(await target.url(offset + batch + index));
        await new Promise<void>((resolve, reject) => {
          ws.once('open', () => resolve());
          ws.once('error', reject);
          ws.once('unexpected-response', (_request, response) =>
            reject(new Error(`${target.name}: handshake ${response.statusCode}`)),
          );
        });
        return ws;
      }),
    );
    sockets.push(...opened);
  }
  return sockets;
}

/** Runs both phases on 100 clients; `sentAt` keys are the markers `sender:n`. */
async function measure(target: Target): Promise<Figures> {
  const clients = await connectAll(target, CLIENTS);
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let deliveries = 0;
  const echo = new Map<number, () => void>();
  clients.forEach((ws, index) => {
    ws.on('message', (data) => {
      const marker = target.marker((data as Buffer).toString());
      if (marker === undefined) return;
      const started = sentAt.get(marker);
      if (started === undefined) return;
      deliveries += 1;
      latencies.push(performance.now() - started);
      if (index < SENDERS && marker.startsWith(`${index}:`)) echo.get(index)?.();
    });
  });
  await sleep(500);

  // Saturation: each sender keeps WINDOW messages in flight, sending the next when its own comes back.
  let sequence = 0;
  let accepted = 0;
  let running = true;
  const send = (sender: number) => {
    const marker = `${sender}:${sequence++}`;
    sentAt.set(marker, performance.now());
    clients[sender].send(target.frame(marker));
  };
  for (let sender = 0; sender < SENDERS; sender++) {
    echo.set(sender, () => {
      accepted += 1;
      if (running) send(sender);
    });
    for (let inFlight = 0; inFlight < WINDOW; inFlight++) send(sender);
  }
  const saturationStart = performance.now();
  deliveries = 0;
  await sleep(SATURATION_MS);
  running = false;
  const saturationSeconds = (performance.now() - saturationStart) / 1000;
  const saturation = {
    acceptedPerSecond: accepted / saturationSeconds,
    deliveriesPerSecond: deliveries / saturationSeconds,
  };
  await sleep(2_000);

  // Fixed rate: FIXED_RATE messages/s spread over the senders; latency of every delivery.
  echo.clear();
  latencies.length = 0;
  deliveries = 0;
  const total = (FIXED_RATE * FIXED_MS) / 1000;
  const fixedStart = performance.now();
  for (let index = 0; index < total; index++) {
    const due = fixedStart + (index * 1000) / FIXED_RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    send(index % SENDERS);
  }
  await sleep(2_000);
  const fixedSeconds = (performance.now() - fixedStart) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  const expected = total * CLIENTS;
  if (deliveries < expected)
    process.stdout.write(
      `${target.name}: ${expected - deliveries} of ${expected} deliveries missing at the fixed rate\n`,
    );

  for (const ws of clients) ws.close();
  await sleep(1_000);

  // Memory: RSS growth of the server process per connection, over MEMORY_CLIENTS idle connections.
  const before = rssBytes(target.pid);
  const many = await connectAll(target, MEMORY_CLIENTS, CLIENTS);
  await sleep(1_000);
  const after = rssBytes(target.pid);
  for (const ws of many) ws.close();
  await sleep(500);

  return {
    ...saturation,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    fixedDeliveriesPerSecond: deliveries / fixedSeconds,
    bytesPerConnection: (after - before) / MEMORY_CLIENTS,
  };
}

function spawnLogged(entry: string, env: Record<string, string>, logFile: string): ChildProcess {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  return child;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(200);
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms`);
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acs-bench-rooms-'));
  const [apiPort, temporalPort, temporalUiPort, mongoPort, barePort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const adminKey = `acs_admin_bench_${randomBytes(16).toString('hex')}`;
  const jwtSecret = randomBytes(32).toString('hex');
  const service = spawnLogged(
    'start.ts',
    {
      PORT: String(apiPort),
      EMBEDDED_TEMPORAL_PORT: String(temporalPort),
      EMBEDDED_TEMPORAL_UI_PORT: String(temporalUiPort),
      EMBEDDED_MONGODB_PORT: String(mongoPort),
      DATA_DIR: dataDir,
      ADMIN_API_KEY: adminKey,
      AUTH_JWT_SECRET: jwtSecret,
      LOG_LEVEL: 'warn',
      // Every client of the bench connects from loopback: the per-address caps would refuse the 501st.
      WS_MAX_SOCKETS_PER_ADDRESS: '0',
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0',
    },
    path.join(dataDir, 'service.log'),
  );
  const bare = spawnLogged('bench/rooms/bare-server.ts', { PORT: String(barePort) }, path.join(dataDir, 'bare.log'));
  try {
    const baseUrl = `http://127.0.0.1:${apiPort}`;
    await waitFor(async () => (await fetch(`${baseUrl}/readyz`)).status === 200, 'service');
    await waitFor(
      async () => fs.readFileSync(path.join(dataDir, 'bare.log'), 'utf8').includes('listening'),
      'bare server',
    );

    const created = await fetch(`${baseUrl}/rooms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': adminKey },
      body: JSON.stringify({ name: 'bench', maxParticipants: CLIENTS + MEMORY_CLIENTS }),
    }).then((response) => response.json() as Promise<{ roomId: string }>);
    const key = new TextEncoder().encode(jwtSecret);
    // The session token is an RFC 9068 access token (typ at+jwt); the identity token is not.
    const token = (subject: string, typ?: string) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', ...(typ ? { typ } : {}) })
        .setSubject(subject)
        .setExpirationTime('1h')
        .sign(key);

    const rooms: Target = {
      name: 'rooms',
      pid: service.pid!,
      url: async (index) => {
        const [session, identity] = await Promise.all([
          token(`bench-user-${index}`, 'at+jwt'),
          token(`bench-user-${index}`),
        ]);
        return `ws://127.0.0.1:${apiPort}/parties/chat-server/${created.roomId}?Authorization=${session}&X-Identity-Token=${identity}`;
      },
      frame: (marker) => JSON.stringify({ type: 'MESSAGE', data: { content: marker } }),
      marker: (text) => /"content":"([0-9]+:[0-9]+)"/.exec(text)?.[1],
    };
    const baseline: Target = {
      name: 'bare ws',
      pid: bare.pid!,
      url: async () => `ws://127.0.0.1:${barePort}`,
      frame: (marker) => JSON.stringify({ type: 'MESSAGE', data: { content: marker } }),
      marker: (text) => /"content":"([0-9]+:[0-9]+)"/.exec(text)?.[1],
    };
    const figures = { rooms: await measure(rooms), bare: await measure(baseline) };
    const row = (name: string, f: Figures) =>
      `| ${name} | ${f.acceptedPerSecond.toFixed(0)} | ${f.deliveriesPerSecond.toFixed(0)} | ${f.fixedDeliveriesPerSecond.toFixed(0)} | ${f.p50Ms.toFixed(1)} | ${f.p99Ms.toFixed(1)} | ${(f.bytesPerConnection / 1024).toFixed(1)} |`;
    process.stdout.write(
      [
        `${os.cpus().length} × ${os.cpus()[0].model}, Node ${process.version}, load average ${os
          .loadavg()
          .map((load) => load.toFixed(1))
          .join(' ')} at the end; ${CLIENTS} clients in one room, ${SENDERS} of them sending`,
        '',
        '| server | accepted msg/s (saturated) | deliveries/s (saturated) | deliveries/s at 200 msg/s | p50 ms at 200 msg/s | p99 ms at 200 msg/s | KiB RSS per connection |',
        '|---|---|---|---|---|---|---|',
        row('rooms (service, FerretDB)', figures.rooms),
        row('bare ws broadcast', figures.bare),
        '',
        `rooms / bare deliveries at saturation: ${((100 * figures.rooms.deliveriesPerSecond) / figures.bare.deliveriesPerSecond).toFixed(0)}%`,
        '',
      ].join('\n'),
    );
  } finally {
    bare.kill('SIGTERM');
    service.kill('SIGTERM');
    await Promise.all(
      [bare, service].map(
        (child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve))),
      ),
    );
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
