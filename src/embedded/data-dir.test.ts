import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFerretDb } from './ferretdb';
import { ManagedProcess } from './managed-process';
import { persistentSecret } from '../main';

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe('files the service writes under DATA_DIR', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'acs-data-dir-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('keeps a generated secret in a 0600 file, in a 0700 folder it creates', () => {
    const dataDir = path.join(root, 'data');
    const secret = persistentSecret(dataDir, 'admin-api-key', () => 'acs_admin_generated');
    expect(secret).toBe('acs_admin_generated');
    expect(modeOf(path.join(dataDir, 'admin-api-key'))).toBe(0o600);
    expect(modeOf(dataDir)).toBe(0o700);
    expect(persistentSecret(dataDir, 'admin-api-key', () => 'another')).toBe('acs_admin_generated');
  });

  it('tightens a folder and a secret file that exist with wider modes', () => {
    const dataDir = path.join(root, 'data');
    fs.mkdirSync(dataDir, { mode: 0o755 });
    fs.chmodSync(dataDir, 0o755);
    fs.writeFileSync(path.join(dataDir, 'callback-signing-secret'), 'whsec_kept\n', { mode: 0o644 });
    fs.chmodSync(path.join(dataDir, 'callback-signing-secret'), 0o644);
    expect(persistentSecret(dataDir, 'callback-signing-secret', () => 'whsec_new')).toBe('whsec_kept');
    expect(modeOf(path.join(dataDir, 'callback-signing-secret'))).toBe(0o600);
    expect(modeOf(dataDir)).toBe(0o700);
  });

  it("writes a server's log file 0600", async () => {
    const logFile = path.join(root, 'server.log');
    await expect(
      ManagedProcess.start('short-lived', 'true', [], { logFile, host: '127.0.0.1', port: 9, timeoutMs: 5_000 }),
    ).rejects.toThrow();
    expect(modeOf(logFile)).toBe(0o600);
  });

  it("makes FerretDB's folder 0700 and its log 0600", async () => {
    // A binary that exits at once: what is checked is written before the server runs.
    await expect(
      startFerretDb({
        binary: 'true',
        dataDir: root,
        port: 9,
        schema: { database: 'x', collections: [] },
        warn: () => undefined,
      }),
    ).rejects.toThrow();
    expect(modeOf(path.join(root, 'ferretdb'))).toBe(0o700);
    expect(modeOf(path.join(root, 'ferretdb.log'))).toBe(0o600);
  });
});
