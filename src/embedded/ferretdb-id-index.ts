import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * FerretDB 1.24 on SQLite looks documents up by `_id` with `_ferretdb_sjson->'$._id' = ?`, but its
 * own `_id` index is on `_ferretdb_sjson->"_id"`. SQLite matches index expressions as written, so
 * every `_id` find, update and delete scans the whole table, at a cost that grows with it. An index
 * on the exact expression the queries use makes a lookup cost the same at any size (the workaround
 * given in FerretDB issue #4646 for its PostgreSQL handler; figures in docs/embedded-stack.md).
 *
 * Nothing in FerretDB can create such an index, so this step writes it into FerretDB's SQLite
 * files directly, with Python's sqlite3 module (Python is already needed to install the Temporal
 * CLI). FerretDB does not list the index and drops it with its table. Tables created later are
 * indexed on the next start.
 */
const INDEX_SCRIPT = String.raw`
import glob, os, sqlite3, sys
if sqlite3.sqlite_version_info < (3, 38, 0):
    sys.exit("SQLite " + sqlite3.sqlite_version + " has no -> operator (3.38 or later is needed)")
indexed = 0
for path in glob.glob(os.path.join(sys.argv[1], "*.sqlite")):
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        for (table,) in db.execute("SELECT table_name FROM _ferretdb_collections").fetchall():
            quoted = table.replace('"', '""')
            db.execute('CREATE INDEX IF NOT EXISTS "%s_id_lookup" ON "%s" (_ferretdb_sjson->\'$._id\')' % (quoted, quoted))
            indexed += 1
    finally:
        db.close()
print(indexed)
`;

/** Adds the `_id` lookup index to every collection table in FerretDB's SQLite folder; resolves to how many tables have it. */
export async function indexIdLookups(sqliteDir: string): Promise<number> {
  try {
    const { stdout } = await promisify(execFile)('python3', ['-c', INDEX_SCRIPT, sqliteDir], { timeout: 60_000 });
    return Number(stdout.trim());
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`Could not index FerretDB's _id lookups in ${sqliteDir}: ${stderr?.trim() || message}`, {
      cause: error,
    });
  }
}
