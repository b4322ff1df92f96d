import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../src/util/ports';
import { useForFile } from './use-for-file';

const ROOT = path.resolve(__dirname, '..', '..');
const ENTRY = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const PRELOAD = path.join(__dirname, 'loopback-listen.cjs');

/** Lines of output kept for the message of a failed start. */
const KEPT_LINES = 50;

/**
 * `@modelcontextprotocol/server-everything` in Streamable HTTP mode, a child process on a free
 * loopback port: its `app.listen(PORT)` names no host, so the loopback-listen preload binds it to
 * 127.0.0.1, and the start fails unless that is where it says it bound.
 */
export class ServerEverything {
  private readonly output: string[] = [];
  private readonly exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    // Both streams are read to the end: the server logs every request, and a full pipe would stall it.
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        this.output.push(...chunk.split('\n').filter((line) => line !== ''));
        this.output.splice(0, Math.max(0, this.output.length - KEPT_LINES));
      });
    }
  }

  static async start(timeoutMs = 15_000): Promise<ServerEverything> {
    const port = await freePort();
    const child = spawn(process.execPath, ['--require', PRELOAD, ENTRY, 'streamableHttp'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new ServerEverything(child, port);
    try {
      await server.ready(timeoutMs);
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  /** Resolves once the server said it listens, bound to 127.0.0.1 and the port asked for. */
  private ready(timeoutMs: number): Promise<void> {
    const stderr = this.child.stderr!;
    return new Promise<void>((resolve, reject) => {
      let text = '';
      const done = (error?: Error) => {
        clearTimeout(timer);
        stderr.off('data', onData);
        this.child.off('exit', onExit);
        if (error) reject(error);
        else resolve();
      };
      const onData = (chunk: string) => {
        text += chunk;
        const bound = /loopback-listen: bound (\S+)\n/.exec(text);
        if (bound && bound[1] !== `127.0.0.1:${this.port}`)
          done(new Error(`server-everything bound ${bound[1]}, not 127.0.0.1:${this.port}`));
        else if (bound && text.includes(`listening on port ${this.port}`)) done();
      };
      const onExit = (code: number | null) =>
        done(new Error(`server-everything exited (${code}) during start-up:\n${this.output.join('\n')}`));
      const timer = setTimeout(
        () => done(new Error(`server-everything not listening within ${timeoutMs} ms:\n${this.output.join('\n')}`)),
        timeoutMs,
      );
      stderr.on('data', onData);
      this.child.once('exit', onExit);
    });
  }

  /** SIGTERM, then SIGKILL if it is still there after `graceMs`. */
  async stop(graceMs = 3_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
    ]);
    clearTimeout(timer);
    if (!stopped) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

/** server-everything for the file's tests, started before them and stopped after. */
export function useServerEverything(): () => ServerEverything {
  return useForFile(
    'server-everything',
    () => ServerEverything.start(),
    (server) => server.stop(),
  );
}
