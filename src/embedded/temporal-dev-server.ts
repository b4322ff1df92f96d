import path from 'node:path';
import { SEARCH_ATTRIBUTES } from '../router/search-attributes';
import { ManagedProcess } from './managed-process';

export interface TemporalDevServerOptions {
  binary: string;
  dataDir: string;
  port: number;
  /** undefined: no Web UI. */
  uiPort?: number;
  namespace: string;
  /** false: SQLite's defaults (rollback journal, synchronous=full), for the bench's comparison. */
  tunedSqlite?: boolean;
}

/** WAL and synchronous=normal keep commits durable across a process crash at a fraction of the default's fsync cost. */
const TUNED_SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

const HOST = '127.0.0.1';

/** The Temporal CLI's dev server on loopback, persisted to a SQLite file under the data folder. */
export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<ManagedProcess> {
  const args = [
    'server', 'start-dev',
    '--ip', HOST,
    '--port', String(options.port),
    '--namespace', options.namespace,
    '--db-filename', path.join(options.dataDir, 'temporal.db'),
    ...(options.tunedSqlite === false ? [] : TUNED_SQLITE_PRAGMAS.flatMap((pragma) => ['--sqlite-pragma', pragma])),
    '--log-level', 'warn',
    ...SEARCH_ATTRIBUTES.flatMap((key) => ['--search-attribute', `${key.name}=Keyword`]),
    ...(options.uiPort === undefined ? ['--headless'] : ['--ui-port', String(options.uiPort), '--ui-ip', HOST]),
  ];
  return ManagedProcess.start('temporal', options.binary, args, {
    logFile: path.join(options.dataDir, 'temporal.log'),
    host: HOST,
    port: options.port,
  });
}

export const temporalAddress = (port: number) => `${HOST}:${port}`;
