import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { PRIVATE_FILE_MODE } from './data-dir';
import { listenOnce } from '../util/ports';

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A server must not outlive the process that started it, also when that process is killed with
 * SIGKILL or by the OOM killer and runs no code of its own: an orphan keeps its port and its data
 * folder, and the next start finds them taken. Linux's parent-death signal (prctl
 * PR_SET_PDEATHSIG) is sent by the kernel however the parent ends. Node cannot set it for a child,
 * so util-linux's `setpriv --pdeathsig` sets it and then execs the server: the server keeps the
 * pid that was spawned and no process stays in between. The kernel sends it when the thread that
 * spawned the server ends: here that is Node's main thread, which ends with the process (a server
 * started from a worker_thread would end with that thread).
 *
 * KILL rather than TERM: a parent that is gone waits for no graceful stop, and a signal the server
 * may handle slowly or not at all could leave it running; both servers' SQLite files stay
 * consistent when their process is killed. Pidfiles checked by the next start would leave the
 * orphan running, holding its port, until someone starts the service again; a watchdog process per
 * server that ends it when its stdin pipe from here closes would work beyond Linux, but is one
 * more process per server, passing signals and exit statuses on.
 *
 * Where setpriv or its --pdeathsig is missing (not Linux, util-linux before 2.33), servers start
 * without it and can outlive a crash, as can one whose parent dies in the instant between the
 * spawn and setpriv's prctl; ensurePortsFree then keeps the next start off their ports.
 */
const PARENT_DEATH_SIGNAL = 'KILL';
let parentDeathSignalWorks: boolean | undefined;

/** Whether the servers started here end with this process, however it ends. */
export function serversEndWithThisProcess(): boolean {
  parentDeathSignalWorks ??=
    spawnSync('setpriv', ['--pdeathsig', PARENT_DEATH_SIGNAL, '--', 'true'], { stdio: 'ignore' }).status === 0;
  return parentDeathSignalWorks;
}

/** A server this project started itself: its output goes to a log file, and it is stopped on shutdown. */
export class ManagedProcess {
  private exitStatus: ExitStatus | undefined;
  private stopRequested = false;
  private readonly unexpectedExitListeners: Array<(exit: ExitStatus) => void> = [];

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    readonly logFile: string,
  ) {
    child.once('exit', (code, signal) => {
      const exit = { code, signal };
      this.exitStatus = exit;
      if (!this.stopRequested) for (const listener of this.unexpectedExitListeners) listener(exit);
    });
  }

  /** Spawns the command and resolves once `host:port` accepts connections; rejects with the log's tail if it dies first. */
  static async start(
    name: string,
    command: string,
    args: string[],
    options: { logFile: string; host: string; port: number; timeoutMs?: number },
  ): Promise<ManagedProcess> {
    const log = fs.openSync(options.logFile, 'a', PRIVATE_FILE_MODE);
    // A log created by an earlier version kept its mode: servers log addresses, errors and sometimes request data.
    fs.fchmodSync(log, PRIVATE_FILE_MODE);
    const [file, argv] = serversEndWithThisProcess()
      ? ['setpriv', ['--pdeathsig', PARENT_DEATH_SIGNAL, '--', command, ...args]]
      : [command, args];
    const child = spawn(file, argv, { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    const managed = new ManagedProcess(name, child, options.logFile);
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    while (!(await canConnect(options.host, options.port))) {
      if (managed.exitStatus) throw new Error(`${name} exited during start-up:\n${managed.logTail()}`);
      if (Date.now() > deadline) {
        await managed.stop();
        throw new Error(`${name} did not listen on ${options.host}:${options.port} in time:\n${managed.logTail()}`);
      }
      await sleep(100);
    }
    return managed;
  }

  /** Until the server exits, stopped or not. */
  get running(): boolean {
    return this.exitStatus === undefined;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Calls `listener` when the server exits without stop() being called: it died under the service. At once if it already did. */
  onUnexpectedExit(listener: (exit: ExitStatus) => void): void {
    if (!this.exitStatus) this.unexpectedExitListeners.push(listener);
    else if (!this.stopRequested) listener(this.exitStatus);
  }

  logTail(lines = 20): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8').trim().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopRequested = true;
    if (this.exitStatus) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}

export function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A port a start listens on, named by the variable that sets it. */
export interface PortClaim {
  variable: string;
  host: string;
  port: number;
  /** Who listens there, for the message: "the embedded FerretDB". */
  user: string;
}

/** A start that cannot have its ports; the message says which port and which variable moves it. */
export class PortTakenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PortTakenError';
  }
}

/**
 * Refuses a start whose ports are in use, before it starts anything. A server's readiness here is
 * "its port accepts connections", so a server already on that port (an orphan of an earlier start,
 * anything else) would pass for ours while ours dies with "address already in use". Port 0 means
 * any free port and is not checked.
 */
export async function ensurePortsFree(claims: readonly PortClaim[]): Promise<void> {
  const claimed = new Map<number, PortClaim>();
  for (const claim of claims.filter(({ port }) => port !== 0)) {
    const earlier = claimed.get(claim.port);
    if (earlier) {
      throw new PortTakenError(
        `${earlier.variable} and ${claim.variable} are both ${claim.port}, but ${earlier.user} and ${claim.user} need a port each: set ${claim.variable} to a free port.`,
      );
    }
    claimed.set(claim.port, claim);
    if (!(await canListen(claim.host, claim.port))) {
      throw new PortTakenError(
        `Port ${claim.port} on ${claim.host} is in use by another process, so ${claim.user} cannot listen there. ` +
          `Stop that process (\`ss -ltnp 'sport = :${claim.port}'\` names it) or set ${claim.variable} to a free port.`,
      );
    }
  }
}

async function canListen(host: string, port: number): Promise<boolean> {
  try {
    await listenOnce(host, port);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') return false;
    throw error;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
