import fs from 'node:fs';
import path from 'node:path';
import { MongoClient, type Collection } from 'mongodb';
import { mongoUriFor, type FerretDbOptions } from '../src/embedded/ferretdb';
import { type ManagedProcess } from '../src/embedded/managed-process';
import { freePort } from '../src/util/ports';
import { Store } from '../src/store/mongo';
import { StoreGate } from '../src/store/store-gate';
import { startServiceFerretDb } from './support/ferretdb';
import { testStack } from './support/test-stack';
import { until } from './support/until';

const DATABASE = 'wal_test';
const MB = 2 ** 20;

/** A FerretDB of its own, started as `npm start` starts it (src/embedded/ferretdb.ts), so its log is the test's alone. */
async function ownFerretDb(bounds: FerretDbOptions['writeAheadLogs'] = {}) {
  const dataDir = fs.mkdtempSync(path.join(testStack().runDir, 'wal-'));
  const port = await freePort();
  const ferretDb = await startServiceFerretDb({
    binary: testStack().binaries.ferretdb,
    dataDir,
    port,
    database: DATABASE,
    writeAheadLogs: bounds,
  });
  const wal = path.join(dataDir, 'ferretdb', `${DATABASE}.sqlite-wal`);
  return { ferretDb, uri: mongoUriFor(port), walBytes: () => (fs.existsSync(wal) ? fs.statSync(wal).size : 0) };
}

type Task = { _id: string; n: number; pad: string };
const TASKS = 200;
const seed = (documents: Collection<Task>) =>
  documents.insertMany(
    Array.from({ length: TASKS }, (_, index) => ({ _id: `t${index}`, n: 0, pad: 'x'.repeat(4_096) })),
  );

describe("the embedded FerretDB's write-ahead log", () => {
  let ferretDb: ManagedProcess;
  let client: MongoClient;
  let walBytes: () => number;

  beforeAll(async () => {
    const own = await ownFerretDb();
    ({ ferretDb, walBytes } = own);
    client = await MongoClient.connect(own.uri);
  });
  afterAll(async () => {
    await client?.close();
    await ferretDb?.stop();
  });

  it(
    'is emptied once the writes pause, while FerretDB runs on',
    async () => {
      const documents = client.db(DATABASE).collection<Task>('tasks');
      await seed(documents);
      // Updates by _id from four writers, as the service's hot paths write, until the log holds 24 MB.
      let writing = true;
      const writer = async (offset: number) => {
        for (let round = 0; writing && round < 100_000; round += 1)
          await documents.updateOne({ _id: `t${(round * 4 + offset) % 200}` }, { $inc: { n: 1 } });
      };
      const writers = [0, 1, 2, 3].map(writer);
      await until(() => walBytes() > 24 * MB, 'the log grew past 24 MB', 5 * 60_000).finally(() => {
        writing = false;
      });
      await Promise.all(writers);
      await until(() => walBytes() < MB, 'the log was emptied');
      expect((await documents.findOne({ _id: 't0' }))?.n).toBeGreaterThan(0);
    },
    10 * 60_000,
  );
});

describe("the embedded FerretDB's write-ahead log under writes that never pause", () => {
  const MB_HELD = 8;
  let ferretDb: ManagedProcess;
  let store: Store;
  let walBytes: () => number;

  beforeAll(async () => {
    const gate = new StoreGate();
    const own = await ownFerretDb({ gate, checkMs: 250, tryBytes: 2 * MB, holdBytes: MB_HELD * MB });
    ({ ferretDb, walBytes } = own);
    store = await Store.connect(own.uri, DATABASE, gate);
  });
  afterAll(async () => {
    await store?.close();
    await ferretDb?.stop();
  });

  it(
    'is reset with the store calls held back a moment, and stays within a few times the hold size',
    async () => {
      const documents = store.collection<Task>('tasks');
      await seed(documents);
      // Four writers that never pause, as a saturated service writes; sampled until the log was reset three times.
      let [writing, writes, resets, largest, wasHeld] = [true, 0, 0, 0, false];
      const writer = async (offset: number) => {
        for (let round = 0; writing && round < 200_000; round += 1) {
          await documents.updateOne({ _id: `t${(round * 4 + offset) % TASKS}` }, { $inc: { n: 1 } });
          writes += 1;
        }
      };
      const writers = [0, 1, 2, 3].map(writer);
      try {
        await until(
          () => {
            const size = walBytes();
            largest = Math.max(largest, size);
            if (size >= MB_HELD * MB) wasHeld = true;
            if (wasHeld && size < MB) [resets, wasHeld] = [resets + 1, false];
            return resets >= 3;
          },
          'the log was reset three times while the writes went on',
          5 * 60_000,
        );
      } finally {
        writing = false;
      }
      await Promise.all(writers);
      expect(largest).toBeLessThan(4 * MB_HELD * MB);
      expect(writes).toBeGreaterThan(1_000);
    },
    10 * 60_000,
  );
});
