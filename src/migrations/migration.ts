import type { Logger } from '../ops/logger';
import { isDuplicateKey, type Store } from '../store/mongo';

/** Migrations that finish once for good record it here by `_id`, so later starts skip them at the cost of one lookup. */
export const MIGRATIONS_COLLECTION = 'migrations';

/**
 * A change of what is stored, run at start before the service serves. Each one is
 * idempotent and cheap when there is nothing left to change, since several processes may start
 * at once and an older process may still write the old form during a rolling upgrade.
 */
export interface Migration {
  name: string;
  /**
   * Set for a migration that finishes for good: its `_id` in MIGRATIONS_COLLECTION once it ran to
   * the end, after which starts skip it. Without it the migration runs at every start.
   */
  doneOnceAs?: string;
  /** How many documents it changed. */
  run(store: Store): Promise<number>;
}

export async function runMigrations(store: Store, migrations: readonly Migration[], logger: Logger): Promise<void> {
  const done = store.collection<{ _id: string; doneAt: Date }>(MIGRATIONS_COLLECTION);
  for (const migration of migrations) {
    if (migration.doneOnceAs && (await done.findOne({ _id: migration.doneOnceAs }))) continue;
    const changed = await migration.run(store);
    if (changed > 0) logger.info({ migration: migration.name, changed }, 'migrated stored documents');
    // Two processes starting at once may both finish it: the second record is the same fact.
    if (migration.doneOnceAs) {
      await done.insertOne({ _id: migration.doneOnceAs, doneAt: new Date() }).catch((error: unknown) => {
        if (!isDuplicateKey(error)) throw error;
      });
    }
  }
}
