import type { Collection, Document } from 'mongodb';

/** The collection methods that reach the server, held back while the gate is shut. `find` and `aggregate` are held when their cursor is read. */
const SERVER_CALLS = new Set<PropertyKey>([
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'replaceOne',
  'deleteOne',
  'deleteMany',
  'bulkWrite',
  'findOne',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
  'countDocuments',
  'estimatedDocumentCount',
  'distinct',
  'createIndex',
  'createIndexes',
  'dropIndex',
]);
const CURSOR_CALLS = new Set<PropertyKey>(['find', 'aggregate']);

/**
 * Lets the process's store operations through, except while `exclusive` work runs: then new
 * operations wait, and the work starts once those already running ended. The embedded FerretDB
 * needs such a moment to reset its SQLite write-ahead log, which readers of its own updates
 * otherwise keep pinned for as long as the writes go on (src/embedded/ferretdb-wal.ts).
 */
export class StoreGate {
  private running = 0;
  private shut?: Promise<void>;
  private drained?: () => void;

  /** Runs `operation` when the gate is open, counting it while it runs. */
  async pass<T>(operation: () => Promise<T>): Promise<T> {
    while (this.shut) await this.shut;
    this.running += 1;
    try {
      return await operation();
    } finally {
      this.running -= 1;
      if (this.running === 0) this.drained?.();
    }
  }

  /**
   * Shuts the gate, waits up to `drainMs` for the running operations to end, runs `work` with none
   * running, and opens again. undefined, without running `work`, when they did not end in time.
   */
  async exclusive<T>(work: () => Promise<T>, drainMs: number): Promise<T | undefined> {
    if (this.shut) return undefined;
    let open!: () => void;
    this.shut = new Promise((resolve) => (open = resolve));
    try {
      if (!(await this.drain(drainMs))) return undefined;
      return await work();
    } finally {
      this.shut = undefined;
      open();
    }
  }

  private drain(withinMs: number): Promise<boolean> {
    if (this.running === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.drained = undefined;
        resolve(false);
      }, withinMs);
      this.drained = () => {
        clearTimeout(timer);
        this.drained = undefined;
        resolve(true);
      };
    });
  }

  /** `collection` with every call that reaches the server passing this gate. */
  guard<T extends Document>(collection: Collection<T>): Collection<T> {
    return new Proxy(collection, {
      get: (target, property) => {
        const value = Reflect.get(target, property, target) as unknown;
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => unknown;
        if (SERVER_CALLS.has(property))
          return (...args: unknown[]) => this.pass(() => method.apply(target, args) as Promise<unknown>);
        if (CURSOR_CALLS.has(property))
          return (...args: unknown[]) =>
            this.guardCursor(method.apply(target, args) as { toArray(): Promise<unknown> });
        return method.bind(target);
      },
    });
  }

  /** The service reads cursors whole with `toArray`: that is the call held back. */
  private guardCursor<C extends { toArray(): Promise<unknown> }>(cursor: C): C {
    const toArray = cursor.toArray.bind(cursor);
    cursor.toArray = () => this.pass(toArray);
    return cursor;
  }
}
