import fs from 'node:fs';

/**
 * Modes of what the service writes under DATA_DIR: the generated admin key, callback secret and
 * secrets key, the embedded servers' data and logs. They are the owner's alone, as any other user
 * on the machine who read them could act as admin, forge callbacks or open the agents' signing
 * secrets.
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Creates the folder owner-only, and tightens it when it exists already: mkdir's mode applies only
 * to a folder it creates. The servers' own files (temporal.db, FerretDB's SQLite files) are
 * created by them with their modes; this folder is what keeps others out of them.
 */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  fs.chmodSync(dir, PRIVATE_DIR_MODE);
}
