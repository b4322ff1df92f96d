import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

export type Entry = 'start.ts' | 'server.ts' | 'worker.ts';

/**
 * One service process (API, worker or both) run the way an operator runs it: `node --import tsx`,
 * in a single process so that a SIGKILL in a durability test really kills it.
 */
export class ServiceProcess {
  private exit: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly logFile: string,
    /** Where this process's lines start: a restarted process appends to the log of the one before. */
    private readonly logStart: number,
  ) {
    this.exit = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  static spawn(entry: Entry, env: Record<string, string>, logFile: string): ServiceProcess {
    const logStart = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
    const log = fs.openSync(logFile, 'a');
    const child = spawn(process.execPath, ['--import', 'tsx', entry], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', log, log],
    });
    fs.closeSync(log);
    return new ServiceProcess(child, logFile, logStart);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves once GET {baseUrl}/readyz answers 200; rejects with the log's tail if the process dies or time runs out. */
  async waitReady(baseUrl: string, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`service exited during start-up:\n${this.logTail()}`);
      const status = await fetch(`${baseUrl}/readyz`).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`service not ready within ${timeoutMs} ms:\n${this.logTail()}`);
  }

  /** Resolves once this process logged `text` (for processes without an API, like a worker). */
  async waitForLog(text: string, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`service exited:\n${this.logTail()}`);
      if (fs.readFileSync(this.logFile).subarray(this.logStart).toString('utf8').includes(text)) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`"${text}" not logged within ${timeoutMs} ms:\n${this.logTail()}`);
  }

  logTail(lines = 30): string {
    return fs.readFileSync(this.logFile, 'utf8').trim().split('\n').slice(-lines).join('\n');
  }

  /** A graceful stop (SIGTERM), or a crash (SIGKILL). */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    if (this.running) this.child.kill(signal);
    await this.exit;
  }
}
