import { randomUUID } from 'node:crypto';
import { Store, isDuplicateKey } from '../src/store/mongo';
import { testStack } from './support/test-stack';

describe('MongoDB store on FerretDB', () => {
  let store: Store;

  beforeAll(async () => {
    const stack = testStack();
    store = await Store.connect(stack.mongoUri, `${stack.mongoDatabase}_store_test`);
  });
  afterAll(async () => {
    await store.db.dropDatabase();
    await store.close();
  });

  it('writes a document and reads it back through a multikey index', async () => {
    const things = store.collection<{ _id: string; tokens: string[]; createdAt: Date }>('things');
    await store.ensureIndexes('things', [{ key: { tokens: 1 }, name: 'by_token' }]);
    const id = randomUUID();
    const createdAt = new Date('2026-01-02T03:04:05.678Z');
    await things.insertOne({ _id: id, tokens: ['alpha', 'beta'], createdAt });
    expect(await things.findOne({ tokens: 'beta' })).toEqual({ _id: id, tokens: ['alpha', 'beta'], createdAt });
    expect(await things.countDocuments({ tokens: 'gamma' })).toBe(0);
  });

  it('enforces a unique index with the duplicate-key error the code relies on', async () => {
    const keyed = store.collection<{ _id: string; key: string }>('keyed');
    await store.ensureIndexes('keyed', [{ key: { key: 1 }, name: 'unique_key', unique: true }]);
    await keyed.insertOne({ _id: randomUUID(), key: 'same' });
    const second = await keyed.insertOne({ _id: randomUUID(), key: 'same' }).catch((error: unknown) => error);
    expect(isDuplicateKey(second)).toBe(true);
  });
});
