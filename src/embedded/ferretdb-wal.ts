import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { StoreGate } from '../store/store-gate';

/**
 * FerretDB's SQLite write-ahead logs grow for as long as updates go on, and shrink only at a clean
 * shutdown: an update keeps its read cursor open on one connection while it writes on another, so
 * some reader always holds a snapshot in the log and SQLite's automatic checkpoints never reset it
 * (journal_size_limit, set in ferretdb.ts, only cuts a log that was reset). A checkpoint in
 * TRUNCATE mode resets and empties it, but it keeps writers out while it waits for those readers,
 * and they wait for the writer lock in turn: a long wait stalls every write and then fails anyway,
 * or makes FerretDB's own writes fail once their busy timeout (10 s) runs out. So the checkpoint is
 * tried often and briefly: it succeeds in any lull of the writes, and costs a stall of at most
 * WAL_TRY_WAIT_S when there is none. Writes that leave no lull are made one: past `holdBytes`, the
 * service's own store calls (a StoreGate; FerretDB has no other client) are held back while the
 * running ones end, and the checkpoint then finds no reader in its way.
 */
const WAL_TRY_WAIT_S = 0.1;
/** How long a held-back checkpoint may take: SQLite copies the log into the database meanwhile. */
const WAL_HOLD_WAIT_S = 10;
/** How long the running store calls have to end before a hold is given up and tried at the next check. */
const WAL_DRAIN_MS = 2_000;
/** A log this large is worth a warning: the writes have left no lull for a while. */
const WAL_WARN_BYTES = 512 * 2 ** 20;

export interface WriteAheadLogBounds {
  /** Holds the service's store calls back for a checkpoint; without it, logs empty only in lulls. */
  gate?: StoreGate;
  /** How often the logs are looked at. */
  checkMs: number;
  /** A log this large is checkpointed when the writes allow. */
  tryBytes: number;
  /** A log this large is checkpointed with the store calls held back. */
  holdBytes: number;
}

export const DEFAULT_WAL_BOUNDS: WriteAheadLogBounds = {
  checkMs: 2_000,
  tryBytes: 16 * 2 ** 20,
  holdBytes: 128 * 2 ** 20,
};

/** Checkpoints a SQLite database and truncates its log, from a connection of its own (SQLite allows one beside FerretDB's); prints 1 when readers or writers kept it from finishing. */
const CHECKPOINT_SCRIPT = String.raw`
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=float(sys.argv[2]), isolation_level=None)
try:
    print(db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0])
finally:
    db.close()
`;

/** Checkpoints and truncates the log of one of FerretDB's SQLite files; false when the wait ran out first. */
export async function truncateWriteAheadLog(database: string, waitSeconds: number): Promise<boolean> {
  const { stdout } = await promisify(execFile)('python3', ['-c', CHECKPOINT_SCRIPT, database, String(waitSeconds)], {
    timeout: (waitSeconds + 30) * 1_000,
  });
  return stdout.trim() === '0';
}

/** Truncates the logs of the SQLite files in `sqliteDir` while `running()` holds, within `bounds`; `warn` hears of a log that keeps growing. */
export function boundWriteAheadLogs(
  sqliteDir: string,
  running: () => boolean,
  warn: (message: string) => void,
  bounds: WriteAheadLogBounds = DEFAULT_WAL_BOUNDS,
): void {
  const { gate, checkMs, tryBytes, holdBytes } = bounds;
  const check = async () => {
    for (const file of fs.readdirSync(sqliteDir).filter((name) => name.endsWith('.sqlite'))) {
      const database = path.join(sqliteDir, file);
      const size = walBytes(database);
      if (size < tryBytes || (await truncateWriteAheadLog(database, WAL_TRY_WAIT_S))) continue;
      const held =
        size >= holdBytes && gate
          ? await gate.exclusive(() => truncateWriteAheadLog(database, WAL_HOLD_WAIT_S), WAL_DRAIN_MS)
          : undefined;
      if (!held && size >= WAL_WARN_BYTES)
        warn(
          `The write-ahead log of ${database} is ${Math.round(size / 2 ** 20)} MB: the writes left no moment to checkpoint it`,
        );
    }
  };
  const next = () => {
    if (!running()) return;
    setTimeout(() => {
      if (!running()) return;
      check()
        .catch((error: unknown) =>
          warn(`Could not checkpoint FerretDB's write-ahead logs: ${(error as Error).message}`),
        )
        .finally(next);
    }, checkMs).unref();
  };
  next();
}

function walBytes(database: string): number {
  try {
    return fs.statSync(`${database}-wal`).size;
  } catch {
    return 0;
  }
}
