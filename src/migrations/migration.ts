import type { Logger } from '../ops/logger';
import type { Store } from '../store/mongo';

/** Migrations that finish once for good record it here by `_id`, so later starts skip them at the cost of one lookup. */
export const MIGRATIONS_COLLECTION = 'migrations';

/**
 * A change of what is stored, run at every start before the service serves. Each one is
 * idempotent and cheap when there is nothing left to change, since several processes may start
 * at once and an older process may still write the old form during a rolling upgrade.
 */
export interface Migration {
  name: string;
  /** How many documents it changed. */
  run(store: Store): Promise<number>;
}

export async function runMigrations(store: Store, migrations: readonly Migration[], logger: Logger): Promise<void> {
  for (const migration of migrations) {
    const changed = await migration.run(store);
    if (changed > 0) logger.info({ migration: migration.name, changed }, 'migrated stored documents');
  }
}
