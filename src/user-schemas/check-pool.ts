import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SchemaChecksConfig } from '../config/config';
import { UnavailableError, UnavailableReason } from '../http/errors';
import type { CheckReply, CheckRequest } from './check-messages';
import { SchemaRejected } from './compiler';
import type { JsonSchema } from './json-schema';
import { CheckTooCostly, type CheckOutcome, type SchemaChecks } from './schema-checks';

/** The settings of a CheckPool: SCHEMA_CHECK_THREADS and SCHEMA_CHECK_TIMEOUT_MS (docs/configuration.md), and two more. */
export interface CheckPoolOptions extends SchemaChecksConfig {
  /** How many checks may wait for a thread; past that they are refused with 503. Default: 256 per thread. */
  maxWaiting?: number;
  /** The heap of one thread, in MiB: a check that needs more is refused. Default: 256. */
  threadMemoryMb?: number;
}

interface Job {
  request: CheckRequest;
  resolve: (reply: CheckReply) => void;
  reject: (error: Error) => void;
}

interface CheckThread {
  worker: Worker;
  ready: boolean;
  job?: Job;
  deadline?: NodeJS.Timeout;
}

const RESPAWN_DELAY_MS = 1_000;

// The thread loads the TypeScript sources as the service does, through tsx.
const THREAD_ENTRY = path.join(__dirname, 'check-thread.ts');
const BOOTSTRAP = `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(THREAD_ENTRY)});`;

/**
 * Schema checks on worker threads, each with a deadline. A thread that runs past it is ended (the
 * only way to stop synchronous code) and replaced; the check is refused, and the event loop of the
 * service never waits on Ajv, whatever the schema and the data.
 */
export class CheckPool implements SchemaChecks {
  private readonly idle: CheckThread[] = [];
  private readonly threads = new Set<CheckThread>();
  private readonly waiting: Job[] = [];
  private closed = false;
  private readonly options: Required<CheckPoolOptions>;

  constructor(options: CheckPoolOptions) {
    this.options = { maxWaiting: 256 * options.threads, threadMemoryMb: 256, ...options };
    for (let i = 0; i < options.threads; i += 1) this.spawn();
  }

  async compile(schema: JsonSchema): Promise<void> {
    try {
      const reply = await this.run({ kind: 'compile', schema: textOf(schema) });
      if (reply.kind === 'rejected') throw new SchemaRejected(reply.message, reply.pointer);
    } catch (error) {
      if (error instanceof CheckTooCostly)
        throw new SchemaRejected(`compiling this schema was cut off: ${error.message}`);
      throw error;
    }
  }

  async check(key: string, schema: JsonSchema, data: unknown): Promise<CheckOutcome> {
    const reply = await this.run({ kind: 'check', key, schema: textOf(schema), data: JSON.stringify(data) });
    if (reply.kind === 'valid') return { valid: true, data: reply.data === undefined ? data : JSON.parse(reply.data) };
    if (reply.kind === 'invalid') return { valid: false, errors: reply.errors };
    if (reply.kind === 'rejected') throw new SchemaRejected(reply.message, reply.pointer);
    throw new Error(`a check thread answered ${reply.kind} to a check`);
  }

  /** Ends every thread; checks still waiting or running are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.reject(busy('the service is stopping'));
    await Promise.all([...this.threads].map((thread) => this.end(thread, busy('the service is stopping'))));
  }

  private run(request: CheckRequest): Promise<CheckReply> {
    if (this.closed) return Promise.reject(busy('the service is stopping'));
    if (this.waiting.length >= this.options.maxWaiting)
      return Promise.reject(busy(`${this.options.maxWaiting} schema checks are already waiting for a thread`));
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.waiting.length > 0) {
      const thread = this.idle.pop()!;
      const job = this.waiting.shift()!;
      thread.job = job;
      // The deadline counts from the moment a thread takes the check, not while it waits for one.
      thread.deadline = setTimeout(
        () => void this.end(thread, new CheckTooCostly(`ran longer than ${this.options.timeoutMs} ms`)),
        this.options.timeoutMs,
      );
      thread.worker.postMessage(job.request);
    }
  }

  private spawn(): void {
    const worker = new Worker(BOOTSTRAP, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: this.options.threadMemoryMb },
    });
    // The threads serve the process; they do not keep it alive.
    worker.unref();
    const thread: CheckThread = { worker, ready: false };
    this.threads.add(thread);
    worker.on('message', (reply: CheckReply) => this.answered(thread, reply));
    worker.on('error', (error: Error & { code?: string }) => {
      const failure =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new CheckTooCostly(`needed more than ${this.options.threadMemoryMb} MiB`)
          : error;
      void this.end(thread, failure);
    });
    worker.on('exit', () => void this.end(thread, new Error('a schema check thread stopped')));
  }

  private answered(thread: CheckThread, reply: CheckReply): void {
    if (!this.threads.has(thread)) return;
    clearTimeout(thread.deadline);
    thread.ready = true;
    const job = thread.job;
    thread.job = undefined;
    if (reply.kind === 'too-costly') job?.reject(new CheckTooCostly(reply.why));
    else if (reply.kind !== 'ready') job?.resolve(reply);
    this.idle.push(thread);
    this.dispatch();
  }

  /** Ends `thread`, refuses its check with `failure`, and starts another in its place. */
  private async end(thread: CheckThread, failure: Error): Promise<void> {
    if (!this.threads.delete(thread)) return;
    clearTimeout(thread.deadline);
    const at = this.idle.indexOf(thread);
    if (at >= 0) this.idle.splice(at, 1);
    thread.job?.reject(failure);
    // A thread that could not even load would fail again at once: its replacement waits a second.
    if (!this.closed) {
      if (thread.ready) this.spawn();
      else setTimeout(() => this.closed || this.spawn(), RESPAWN_DELAY_MS).unref();
    }
    await thread.worker.terminate();
  }
}

/**
 * A schema's JSON text, written once per schema object: the agents' schemas are the same objects
 * from one task to the next (RecentAgents keeps them), and up to 64 KiB each.
 */
const schemaTexts = new WeakMap<JsonSchema, string>();
function textOf(schema: JsonSchema): string {
  let text = schemaTexts.get(schema);
  if (text === undefined) {
    text = JSON.stringify(schema);
    schemaTexts.set(schema, text);
  }
  return text;
}

function busy(why: string): UnavailableError {
  return new UnavailableError(UnavailableReason.SCHEMA_CHECKS_BUSY, `Schema checks cannot run now: ${why}`, undefined, {
    'Retry-After': '1',
  });
}
