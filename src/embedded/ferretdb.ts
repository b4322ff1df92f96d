import { ensurePrivateDir } from './data-dir';
import path from 'node:path';
import { MongoClient, MongoServerError } from 'mongodb';
import { indexIdLookups } from './ferretdb-id-index';
import { boundWriteAheadLogs, DEFAULT_WAL_BOUNDS, type WriteAheadLogBounds } from './ferretdb-wal';
import { ManagedProcess } from './managed-process';

const HOST = '127.0.0.1';

export interface FerretDbOptions {
  binary: string;
  dataDir: string;
  port: number;
  /** The service's database and collections: created before the service starts, so each gets its `_id` lookup index. */
  schema: { database: string; collections: readonly string[] };
  /** Told when the `_id` lookups could not be indexed: FerretDB then works, but scans its tables. */
  warn: (message: string) => void;
  /** How its SQLite write-ahead logs are kept small: DEFAULT_WAL_BOUNDS and the gate of the store that uses it. */
  writeAheadLogs?: Partial<WriteAheadLogBounds>;
}

/** FerretDB on loopback with its SQLite handler: a MongoDB wire-compatible server kept in files under the data folder. */
export async function startFerretDb(options: FerretDbOptions): Promise<ManagedProcess> {
  const files = path.join(options.dataDir, 'ferretdb');
  ensurePrivateDir(files);
  const args = [
    '--handler=sqlite',
    `--sqlite-url=${sqliteUrlFor(files)}`,
    `--state-dir=${files}`,
    `--listen-addr=${HOST}:${options.port}`,
    '--debug-addr=-',
    '--telemetry=disable',
    '--log-level=warn',
  ];
  const ferretDb = await ManagedProcess.start('ferretdb', options.binary, args, {
    logFile: path.join(options.dataDir, 'ferretdb.log'),
    host: HOST,
    port: options.port,
  });
  try {
    await createCollections(mongoUriFor(options.port), options.schema);
    await indexIdLookups(files);
  } catch (error) {
    options.warn(`${(error as Error).message}; lookups by _id will scan whole tables`);
  }
  boundWriteAheadLogs(files, () => ferretDb.running, options.warn, {
    ...DEFAULT_WAL_BOUNDS,
    ...options.writeAheadLogs,
  });
  return ferretDb;
}

/** After a checkpoint resets a write-ahead log, SQLite cuts its file back to this size (journal_size_limit); see ferretdb-wal.ts. */
const WAL_SIZE_LIMIT_BYTES = 64 * 2 ** 20;

/** FerretDB's SQLite URL for the folder `files`: FerretDB adds its own pragmas (busy timeout, WAL) to these. */
export const sqliteUrlFor = (files: string) => `file:${files}/?_pragma=journal_size_limit(${WAL_SIZE_LIMIT_BYTES})`;

const NAMESPACE_EXISTS = 48;

async function createCollections(uri: string, { database, collections }: FerretDbOptions['schema']): Promise<void> {
  const client = await MongoClient.connect(uri);
  try {
    for (const name of collections) {
      await client
        .db(database)
        .createCollection(name)
        .catch((error: unknown) => {
          if (!(error instanceof MongoServerError && error.code === NAMESPACE_EXISTS)) throw error;
        });
    }
  } finally {
    await client.close();
  }
}

/**
 * Few connections on purpose: SQLite takes one writer at a time and makes the others wait in its
 * busy handler, which sleeps between tries; queued in a small pool instead, concurrent writes keep
 * their throughput with a far shorter tail (docs/embedded-stack.md, docs/benchmarks.md).
 */
const FERRETDB_POOL_SIZE = 4;

export const mongoUriFor = (port: number) => `mongodb://${HOST}:${port}/?maxPoolSize=${FERRETDB_POOL_SIZE}`;
