import { randomUUID } from 'node:crypto';
import { InsertBatches } from '../src/store/insert-batches';
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

  it('writes the inserts that arrive together in one batch, each caller told of its own document', async () => {
    type Doc = { _id: string; n: number };
    const batched = store.collection<Doc>('batched');
    const taken = randomUUID();
    await batched.insertOne({ _id: taken, n: 0 });
    const inserts: string[] = [];
    const counted = new Proxy(batched, {
      get: (target, name, receiver) => {
        const value = Reflect.get(target, name, receiver) as unknown;
        if ((name !== 'insertOne' && name !== 'insertMany') || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          inserts.push(name);
          return (value as (...each: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const batches = new InsertBatches<Doc>(counted, 4);
    const ids = Array.from({ length: 9 }, () => randomUUID());
    // The first goes alone; the eight behind it in batches of at most four, one of them a duplicate.
    const outcomes = await Promise.all([
      ...ids.slice(0, 5).map((_id, n) => batches.insert({ _id, n })),
      batches.insert({ _id: taken, n: 99 }),
      ...ids.slice(5).map((_id, n) => batches.insert({ _id, n: n + 5 })),
    ]);
    expect(outcomes).toEqual([...Array(5).fill('inserted'), 'duplicate', ...Array(4).fill('inserted')]);
    expect(inserts).toEqual(['insertOne', 'insertMany', 'insertMany', 'insertOne']);
    const stored = await batched.find({}).toArray();
    expect(stored.map((each) => each._id).sort()).toEqual([taken, ...ids].sort());
    expect(stored.find((each) => each._id === taken)?.n).toBe(0);
  });
});
