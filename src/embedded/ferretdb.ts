import fs from 'node:fs';
import path from 'node:path';
import { ManagedProcess } from './managed-process';

const HOST = '127.0.0.1';

/** FerretDB on loopback with its SQLite handler: a MongoDB wire-compatible server kept in files under the data folder. */
export async function startFerretDb(options: { binary: string; dataDir: string; port: number }): Promise<ManagedProcess> {
  const files = path.join(options.dataDir, 'ferretdb');
  fs.mkdirSync(files, { recursive: true });
  const args = [
    '--handler=sqlite',
    `--sqlite-url=file:${files}/`,
    `--state-dir=${files}`,
    `--listen-addr=${HOST}:${options.port}`,
    '--debug-addr=-',
    '--telemetry=disable',
    '--log-level=warn',
  ];
  return ManagedProcess.start('ferretdb', options.binary, args, {
    logFile: path.join(options.dataDir, 'ferretdb.log'),
    host: HOST,
    port: options.port,
  });
}

/**
 * Few connections on purpose: SQLite takes one writer at a time and makes the others wait in its
 * busy handler, which sleeps up to 100 ms between tries. Twenty concurrent writers measured a p99
 * of ~450 ms that way; queued in a pool of 4 connections, ~55 ms, with the same throughput.
 */
const FERRETDB_POOL_SIZE = 4;

export const mongoUriFor = (port: number) => `mongodb://${HOST}:${port}/?maxPoolSize=${FERRETDB_POOL_SIZE}`;
