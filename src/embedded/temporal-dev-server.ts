import path from 'node:path';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
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

/**
 * The agent call's activity task comes back in the reply to the workflow task that schedules it,
 * when the worker has a free slot, instead of through the server's matching: one round trip fewer
 * per call. Temporal servers ship with it off; a production cluster enables it in its dynamic config.
 */
const DYNAMIC_CONFIG = ['system.enableActivityEagerExecution=true'];

const HOST = '127.0.0.1';

/** The Temporal CLI's dev server on loopback, persisted to a SQLite file under the data folder. */
export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<ManagedProcess> {
  const args = [
    'server',
    'start-dev',
    '--ip',
    HOST,
    '--port',
    String(options.port),
    '--namespace',
    options.namespace,
    '--db-filename',
    path.join(options.dataDir, 'temporal.db'),
    ...(options.tunedSqlite === false ? [] : TUNED_SQLITE_PRAGMAS.flatMap((pragma) => ['--sqlite-pragma', pragma])),
    '--log-level',
    'warn',
    ...DYNAMIC_CONFIG.flatMap((setting) => ['--dynamic-config-value', setting]),
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
