// bench/wal: the size of FerretDB's SQLite write-ahead log under sustained updates, with FerretDB's
// own SQLite settings and with the project's (src/embedded/ferretdb.ts), in the same run.
//
//   npx tsx bench/wal/run.ts [seconds per variant, default 60]
//
// Workload per variant: 1,000 documents of 2 KB with the project's `_id` lookup index, 8 concurrent
// loops of updateOne by `_id` (the service's hot writes: task records, presence heartbeats) and 2
// loops of reads by `_id` (readers are what keeps a checkpoint from resetting the log). Samples the
// `-wal` file every second: its largest size under the writes, and its size 5 s after they stopped
// (FerretDB still running). Every variant goes through the service's Store; the last also through
// the StoreGate the embedded stack gives it, which holds its calls back for a checkpoint.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { mongoUriFor, sqliteUrlFor } from '../../src/embedded/ferretdb';
import { indexIdLookups } from '../../src/embedded/ferretdb-id-index';
import { boundWriteAheadLogs, DEFAULT_WAL_BOUNDS } from '../../src/embedded/ferretdb-wal';
import { ManagedProcess } from '../../src/embedded/managed-process';
import { freePort } from '../../src/util/ports';
import { ensureBinaries } from '../../src/embedded/provision';
import { Store } from '../../src/store/mongo';
import { StoreGate } from '../../src/store/store-gate';

const SECONDS = Number(process.argv[2] ?? 60);
const DOCUMENTS = 1_000;
const WRITERS = 8;
const READERS = 2;
const DATABASE = 'wal_bench';
/** How long the log is watched once the writes stopped. */
const SETTLE_MS = 5_000;

interface Variant {
  name: string;
  url(files: string): string;
  /** Runs the project's checkpoints (ferretdb-wal.ts) beside FerretDB. */
  bounded: boolean;
  /** Holds the store's calls back for a checkpoint once the log passes the hold size. */
  gated: boolean;
}

const VARIANTS: Variant[] = [
  { name: "FerretDB's defaults", url: (files) => `file:${files}/`, bounded: false, gated: false },
  { name: 'checkpoints in lulls only', url: sqliteUrlFor, bounded: true, gated: false },
  { name: "the project's settings", url: sqliteUrlFor, bounded: true, gated: true },
];

async function measure(
  binary: string,
  variant: Variant,
): Promise<{ maxMb: number; endMb: number; updatesPerSecond: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acs-wal-'));
  const files = path.join(dir, 'ferretdb');
  fs.mkdirSync(files);
  const port = await freePort();
  const args = [
    '--handler=sqlite',
    `--sqlite-url=${variant.url(files)}`,
    `--state-dir=${files}`,
    `--listen-addr=127.0.0.1:${port}`,
    '--debug-addr=-',
    '--telemetry=disable',
    '--log-level=warn',
  ];
  const ferretDb = await ManagedProcess.start('ferretdb', binary, args, {
    logFile: path.join(dir, 'ferretdb.log'),
    host: '127.0.0.1',
    port,
  });
  const gate = variant.gated ? new StoreGate() : undefined;
  const store = await Store.connect(mongoUriFor(port), DATABASE, gate);
  try {
    const collection = store.collection<{ _id: string; n: number; pad: string }>('docs');
    const pad = 'x'.repeat(2_048);
    for (let start = 0; start < DOCUMENTS; start += 500) {
      await collection.insertMany(Array.from({ length: 500 }, (_, index) => ({ _id: `d${start + index}`, n: 0, pad })));
    }
    await indexIdLookups(files);
    const wal = path.join(files, `${DATABASE}.sqlite-wal`);
    const size = () => (fs.existsSync(wal) ? fs.statSync(wal).size : 0);
    const until = Date.now() + SECONDS * 1_000;
    let updates = 0;
    let maxBytes = 0;
    const writer = async () => {
      while (Date.now() < until) {
        await collection.updateOne({ _id: `d${Math.floor(Math.random() * DOCUMENTS)}` }, { $inc: { n: 1 } });
        updates += 1;
      }
    };
    const reader = async () => {
      while (Date.now() < until) await collection.findOne({ _id: `d${Math.floor(Math.random() * DOCUMENTS)}` });
    };
    const sampler = async () => {
      while (Date.now() < until) {
        maxBytes = Math.max(maxBytes, size());
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    };
    let measuring = true;
    if (variant.bounded)
      boundWriteAheadLogs(
        files,
        () => measuring,
        (message) => console.log(`  ${message}`),
        { ...DEFAULT_WAL_BOUNDS, gate },
      );
    await Promise.all([
      ...Array.from({ length: WRITERS }, writer),
      ...Array.from({ length: READERS }, reader),
      sampler(),
    ]);
    maxBytes = Math.max(maxBytes, size());
    // The writes stop; FerretDB keeps running, as a service does between bursts.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const settledBytes = size();
    measuring = false;
    return { maxMb: maxBytes / 2 ** 20, endMb: settledBytes / 2 ** 20, updatesPerSecond: updates / SECONDS };
  } finally {
    await store.close();
    await ferretDb.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { ferretdb } = ensureBinaries(loadConfig().cacheDir);
  console.log(
    `${SECONDS} s per variant: ${WRITERS} writers by _id and ${READERS} readers by _id over ${DOCUMENTS} documents of 2 KB`,
  );
  for (const variant of VARIANTS) {
    const figures = await measure(ferretdb, variant);
    console.log(
      `${variant.name.padEnd(24)} largest WAL ${figures.maxMb.toFixed(1)} MB, ${SETTLE_MS / 1_000} s after the writes ${figures.endMb.toFixed(1)} MB, ${figures.updatesPerSecond.toFixed(0)} updates/s`,
    );
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
