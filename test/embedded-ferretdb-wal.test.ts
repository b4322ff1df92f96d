import fs from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { mongoUriFor } from '../src/embedded/ferretdb';
import { freePort, type ManagedProcess } from '../src/embedded/managed-process';
import { startServiceFerretDb } from './support/ferretdb';
import { testStack } from './support/test-stack';
import { until } from './support/until';

const DATABASE = 'wal_test';
const MB = 2 ** 20;

// A FerretDB of its own, started as `npm start` starts it (src/embedded/ferretdb.ts), so its log is this test's alone.
describe("the embedded FerretDB's write-ahead log", () => {
  let ferretDb: ManagedProcess;
  let client: MongoClient;
  let wal: string;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(testStack().runDir, 'wal-'));
    const port = await freePort();
    ferretDb = await startServiceFerretDb({ binary: testStack().binaries.ferretdb, dataDir, port, database: DATABASE });
    client = await MongoClient.connect(mongoUriFor(port));
    wal = path.join(dataDir, 'ferretdb', `${DATABASE}.sqlite-wal`);
  });
  afterAll(async () => {
    await client?.close();
    await ferretDb?.stop();
  });

  const walBytes = () => (fs.existsSync(wal) ? fs.statSync(wal).size : 0);

  it('is emptied once the writes pause, while FerretDB runs on', async () => {
    const documents = client.db(DATABASE).collection<{ _id: string; n: number; pad: string }>('tasks');
    await documents.insertMany(Array.from({ length: 200 }, (_, index) => ({ _id: `t${index}`, n: 0, pad: 'x'.repeat(4_096) })));
    // Updates by _id from four writers, as the service's hot paths write, until the log holds 24 MB.
    let writing = true;
    const writer = async (offset: number) => {
      for (let round = 0; writing && round < 100_000; round += 1) await documents.updateOne({ _id: `t${(round * 4 + offset) % 200}` }, { $inc: { n: 1 } });
    };
    const writers = [0, 1, 2, 3].map(writer);
    await until(() => walBytes() > 24 * MB, 'the log grew past 24 MB', 120_000).finally(() => {
      writing = false;
    });
    await Promise.all(writers);
    await until(() => walBytes() < MB, 'the log was emptied', 15_000);
    expect((await documents.findOne({ _id: 't0' }))?.n).toBeGreaterThan(0);
  }, 180_000);
});
