import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

/** A server this project started itself: its output goes to a log file, and it is stopped on shutdown. */
export class ManagedProcess {
  private exited = false;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    readonly logFile: string,
  ) {
    child.once('exit', () => {
      this.exited = true;
    });
  }

  /** Spawns the command and resolves once `host:port` accepts connections; rejects with the log's tail if it dies first. */
  static async start(name: string, command: string, args: string[], options: { logFile: string; host: string; port: number; timeoutMs?: number }): Promise<ManagedProcess> {
    const log = fs.openSync(options.logFile, 'a');
    const child = spawn(command, args, { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    const managed = new ManagedProcess(name, child, options.logFile);
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    while (!(await canConnect(options.host, options.port))) {
      if (managed.exited) throw new Error(`${name} exited during start-up:\n${managed.logTail()}`);
      if (Date.now() > deadline) {
        await managed.stop();
        throw new Error(`${name} did not listen on ${options.host}:${options.port} in time:\n${managed.logTail()}`);
      }
      await sleep(100);
    }
    return managed;
  }

  get pid(): number | undefined {
    return this.child.pid;
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
    if (this.exited) return;
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

/** A TCP port on loopback that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
