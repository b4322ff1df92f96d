import { MongoClient, MongoError, type Collection, type Db, type Document, type IndexDescription } from 'mongodb';
import type { StoreGate } from './store-gate';

/**
 * The MongoDB connection the service shares. Only features both MongoDB 7 and FerretDB 1.24
 * support are used: no transactions, no $text, no partial or TTL indexes, and change streams only
 * where the server has them and ROOM_FANOUT asks for them (src/rooms/message-fanout.ts polls by default).
 *
 * The code outside src/store/ and src/embedded/ relies on what every MongoDB-compatible store the
 * service runs on guarantees, and names the property where it does (docs/embedded-stack.md says why
 * each holds back the embedded FerretDB):
 * - a claim is an insert keyed by what it claims: a unique `_id` has one winner everywhere, while a
 *   conditional update, a read-modify-write or an `$inc` is not atomic on every store;
 * - reads and writes go by `_id` only: an `_id` lookup is served by an index everywhere, while any
 *   other filter (`$in` included) may read the whole collection; lists are kept in memory instead;
 * - callers' free JSON is stored as text: some stores refuse field names with `.` or a leading `$`;
 * - a concurrent write may be refused as busy (isStoreBusy) and is retried (retry-while-busy.ts).
 */
export class Store {
  private constructor(
    readonly client: MongoClient,
    readonly db: Db,
    private readonly gate?: StoreGate,
  ) {}

  /** `gate`, when the embedded FerretDB gives one, holds the calls back while it resets its write-ahead log. */
  static async connect(uri: string, database: string, gate?: StoreGate): Promise<Store> {
    // Short server selection so a request fails fast with 503 instead of hanging while MongoDB is down.
    const client = new MongoClient(uri, {
      serverSelectionTimeoutMS: 3_000,
      connectTimeoutMS: 3_000,
      appName: 'agent-coordination-service',
    });
    await client.connect();
    return new Store(client, client.db(database), gate);
  }

  collection<T extends Document>(name: string): Collection<T> {
    const collection = this.db.collection<T>(name);
    return this.gate ? this.gate.guard(collection) : collection;
  }

  async ensureIndexes(collection: string, indexes: IndexDescription[]): Promise<void> {
    // One at a time: FerretDB 1.24 drops the connection (a panic) when one createIndexes names
    // several indexes that already exist, which is every start after the first.
    for (const index of indexes) await this.db.collection(collection).createIndexes([index]);
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** True for the driver's errors that mean "the database is not reachable right now". */
export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof MongoError)) return false;
  return [
    'MongoServerSelectionError',
    'MongoNetworkError',
    'MongoNetworkTimeoutError',
    'MongoTopologyClosedError',
    'MongoNotConnectedError',
  ].includes(error.name);
}

/**
 * FerretDB on SQLite sometimes refuses a concurrent writer with "database is locked (SQLITE_BUSY)"
 * rather than waiting (a write upgrade its busy timeout cannot resolve). The write may be retried.
 */
export function isStoreBusy(error: unknown): boolean {
  return error instanceof MongoError && error.message.includes('SQLITE_BUSY');
}

/** Duplicate key on a unique index. */
export function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoError && error.code === 11000;
}
