import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { loadConfig } from '../src/config/config';
import { mongoUriFor } from '../src/embedded/ferretdb';
import { freePort, freePorts } from '../src/util/ports';
import { agentRegistration } from './support/agents';
import { call } from './support/http';
import { testStack } from './support/test-stack';
import { STUCK_AFTER_MS, until } from './support/until';

const ROOT = path.resolve(__dirname, '..');
/** A start answers /readyz within about 10 s on a loaded 2-core machine; this is for one that is stuck. */
const READY_WITHIN_MS = 2 * STUCK_AFTER_MS;
/**
 * A start refused for its ports exits once tsx has loaded it, within about 2 s; one whose server
 * died gives the API and the worker at most 10 s to stop, then stops the other server. This is for
 * one that does not exit at all.
 */
const EXITS_WITHIN_MS = STUCK_AFTER_MS;

type ServerName = 'temporal' | 'ferretdb';
type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** The command line of a live process; undefined once it is gone or a zombie (whose command line is empty). */
function commandLine(pid: number): string[] | undefined {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return argv.length ? argv : undefined;
  } catch {
    return undefined;
  }
}

function parentOf(pid: number): number | undefined {
  try {
    // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so read after the last ')'.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/**
 * `npm start` run as an operator runs it, with a data folder and ports of its own, its output
 * kept, and its exit status told.
 */
class Start {
  private output = '';
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcess;

  constructor(
    readonly ports: Record<
      'PORT' | 'EMBEDDED_TEMPORAL_PORT' | 'EMBEDDED_TEMPORAL_UI_PORT' | 'EMBEDDED_MONGODB_PORT',
      number
    >,
    dataDir: string,
  ) {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'start.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ACS_CACHE_DIR: loadConfig().cacheDir,
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        ...Object.fromEntries(Object.entries(ports).map(([variable, port]) => [variable, String(port)])),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [this.child.stdout!, this.child.stderr!])
      stream.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  get log(): string {
    return this.output;
  }

  async waitReady(): Promise<void> {
    await until(
      async () => {
        if (!this.running) throw new Error(`the service exited during start-up:\n${this.output}`);
        return fetch(`http://127.0.0.1:${this.ports.PORT}/readyz`).then(
          (reply) => reply.status === 200,
          () => false,
        );
      },
      `GET /readyz answering 200 (output so far:\n${this.output})`,
      READY_WITHIN_MS,
    );
  }

  /** The embedded servers this process runs now, by the binaries the test stack provisioned. */
  servers(): Partial<Record<ServerName, number>> {
    const { binaries } = testStack();
    const found: Partial<Record<ServerName, number>> = {};
    for (const entry of fs.readdirSync('/proc')) {
      const pid = Number(entry);
      if (!Number.isInteger(pid) || parentOf(pid) !== this.pid) continue;
      const binary = commandLine(pid)?.[0];
      if (binary === binaries.temporal) found.temporal = pid;
      if (binary === binaries.ferretdb) found.ferretdb = pid;
    }
    return found;
  }

  /** Resolves with the exit, or undefined if the process still runs after `ms`. */
  exitWithin(ms: number): Promise<Exit | undefined> {
    return Promise.race([
      this.exited,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms).unref()),
    ]);
  }
}

/** Whether `pid` still runs `binary` (not merely a zombie, nor a new process that reuses the pid). */
const runs = (pid: number, binary: string) => commandLine(pid)?.[0] === binary;

describe('the embedded servers live and die with npm start', () => {
  const { binaries, runDir } = testStack();
  const binaryOf: Record<ServerName, string> = binaries;
  let started: Start[] = [];
  /** Every server pid a test saw, so that none outlives the test, whatever the code under test did. */
  let seen: Array<{ pid: number; binary: string }> = [];

  async function start(
    taken: Partial<Start['ports']> = {},
    dataDir = fs.mkdtempSync(path.join(runDir, 'lifecycle-')),
  ): Promise<Start> {
    // Ports of their own for the servers the test does not place, none equal to a placed one.
    const [api, temporal, ui, mongo] = (await freePorts(8)).filter((port) => !Object.values(taken).includes(port));
    const ports = {
      PORT: api,
      EMBEDDED_TEMPORAL_PORT: temporal,
      EMBEDDED_TEMPORAL_UI_PORT: ui,
      EMBEDDED_MONGODB_PORT: mongo,
      ...taken,
    };
    const launched = new Start(ports, dataDir);
    started.push(launched);
    return launched;
  }

  function remember(servers: Partial<Record<ServerName, number>>): Partial<Record<ServerName, number>> {
    for (const [name, pid] of Object.entries(servers)) seen.push({ pid, binary: binaryOf[name as ServerName] });
    return servers;
  }

  function serversOf(launched: Start): Record<ServerName, number> {
    const servers = remember(launched.servers());
    expect(servers).toEqual({ temporal: expect.any(Number), ferretdb: expect.any(Number) });
    return servers as Record<ServerName, number>;
  }

  afterEach(async () => {
    for (const launched of started) {
      remember(launched.servers());
      if (launched.running) process.kill(launched.pid, 'SIGTERM');
      if (!(await launched.exitWithin(15_000))) process.kill(launched.pid, 'SIGKILL');
    }
    for (const { pid, binary } of seen) if (runs(pid, binary)) process.kill(pid, 'SIGKILL');
    started = [];
    seen = [];
  });

  it('ends the Temporal dev server and FerretDB when npm start is killed with SIGKILL', async () => {
    const launched = await start();
    await launched.waitReady();
    const servers = serversOf(launched);

    process.kill(launched.pid, 'SIGKILL');
    await launched.exited;
    await until(
      () => !runs(servers.temporal, binaries.temporal) && !runs(servers.ferretdb, binaries.ferretdb),
      'both servers gone after the SIGKILL',
    );
  });

  it.each(['PORT', 'EMBEDDED_TEMPORAL_PORT', 'EMBEDDED_TEMPORAL_UI_PORT', 'EMBEDDED_MONGODB_PORT'] as const)(
    'refuses to start, naming the port and %s, when something else listens on it',
    async (variable) => {
      const squatter = net.createServer((socket) => socket.destroy());
      const port = await freePort();
      await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
      try {
        const launched = await start({ [variable]: port });
        const exit = await launched.exitWithin(EXITS_WITHIN_MS);
        expect(exit).toEqual({ code: 1, signal: null });
        expect(launched.log).toContain(`Port ${port} on 127.0.0.1 is in use`);
        expect(launched.log).toContain(`set ${variable} to a free port`);
        expect(launched.log).not.toContain('service is up');
      } finally {
        await new Promise((resolve) => squatter.close(resolve));
      }
    },
  );

  it('refuses to start two servers on one port', async () => {
    const port = await freePort();
    const launched = await start({ EMBEDDED_TEMPORAL_PORT: port, EMBEDDED_MONGODB_PORT: port });
    expect(await launched.exitWithin(EXITS_WITHIN_MS)).toEqual({ code: 1, signal: null });
    expect(launched.log).toContain(`EMBEDDED_TEMPORAL_PORT and EMBEDDED_MONGODB_PORT are both ${port}`);
    expect(launched.log).not.toContain('service is up');
  });

  it.each(['ferretdb', 'temporal'] as const)(
    'exits with status 1, and stops the other server, when the embedded %s dies under it',
    async (name) => {
      const launched = await start();
      await launched.waitReady();
      const servers = serversOf(launched);

      process.kill(servers[name], 'SIGKILL');
      expect(await launched.exitWithin(EXITS_WITHIN_MS)).toEqual({ code: 1, signal: null });
      expect(launched.log).toContain(`the embedded ${name} exited`);
      const other = name === 'temporal' ? 'ferretdb' : 'temporal';
      await until(() => !runs(servers[other], binaryOf[other]), `the ${other} server gone`);
    },
  );

  it('generates SECRETS_KEY into its data folder on the first start, seals signing secrets with it, and reuses it', async () => {
    const dataDir = fs.mkdtempSync(path.join(runDir, 'lifecycle-'));
    const first = await start({}, dataDir);
    await first.waitReady();
    const keyFile = path.join(dataDir, 'secrets-key');
    const key = fs.readFileSync(keyFile, 'utf8').trim();
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    const adminKey = fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim();
    const registered = await call('POST', '/agents', {
      baseUrl: `http://127.0.0.1:${first.ports.PORT}`,
      apiKey: adminKey,
      body: agentRegistration(),
    });
    expect(registered.status).toBe(201);
    const client = await MongoClient.connect(mongoUriFor(first.ports.EMBEDDED_MONGODB_PORT));
    try {
      const stored = await client
        .db(loadConfig().mongoDatabase)
        .collection<{ _id: string; signingSecret: string }>('agents')
        .findOne({ _id: registered.body.agentId });
      expect(stored?.signingSecret).toMatch(/^v1\./);
      expect(JSON.stringify(stored)).not.toContain('whsec_');
    } finally {
      await client.close();
    }
    process.kill(first.pid, 'SIGTERM');
    expect(await first.exitWithin(EXITS_WITHIN_MS)).toEqual({ code: 0, signal: null });

    // A start whose key did not seal the stored secrets would stop (test/registry/signing-secrets-at-rest.test.ts).
    const second = await start({}, dataDir);
    await second.waitReady();
    expect(fs.readFileSync(keyFile, 'utf8').trim()).toBe(key);
  });
});
