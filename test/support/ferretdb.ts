import { startFerretDb, type FerretDbOptions } from '../../src/embedded/ferretdb';
import type { ManagedProcess } from '../../src/embedded/managed-process';
import { SERVICE_COLLECTIONS } from '../../src/service/collections';

/** FerretDB as `npm start` prepares it for the service: its collections created and their `_id` lookups indexed. */
export function startServiceFerretDb(
  options: { binary: string; dataDir: string; port: number; database: string } & Pick<
    FerretDbOptions,
    'writeAheadLogs'
  >,
): Promise<ManagedProcess> {
  const { database, ...where } = options;
  return startFerretDb({
    ...where,
    schema: { database, collections: SERVICE_COLLECTIONS.map(({ name }) => name) },
    warn: (message) => process.stderr.write(`${message}\n`),
  });
}
