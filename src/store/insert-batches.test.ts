import { MongoBulkWriteError, MongoNetworkError, type Collection } from 'mongodb';
import { InsertBatches } from './insert-batches';

type Doc = { _id: string };

/** A collection whose writes answer as `answer` says, the documents of each write recorded. */
function collectionAnswering(answer: (documents: Doc[]) => Promise<unknown>) {
  const writes: string[][] = [];
  const write = (documents: Doc[]) => {
    writes.push(documents.map((each) => each._id));
    return answer(documents);
  };
  const collection = {
    insertOne: (document: Doc) => write([document]),
    insertMany: (documents: Doc[]) => write(documents),
  } as unknown as Collection<Doc>;
  return { collection, writes };
}

const bulkError = (writeErrors: { index: number; code: number }[]) =>
  new MongoBulkWriteError(
    { message: 'refused', code: writeErrors[0]?.code ?? 0, writeErrors } as never,
    { insertedCount: 0 } as never,
  );

describe('InsertBatches', () => {
  it('fails every document of a batch whose write has no result, and goes on with the next batch', async () => {
    let calls = 0;
    const { collection, writes } = collectionAnswering(() =>
      ++calls === 2 ? Promise.reject(new MongoNetworkError('gone')) : Promise.resolve({}),
    );
    const batches = new InsertBatches(collection);
    const outcomes = await Promise.allSettled(['a', 'b', 'c', 'd'].map((_id) => batches.insert({ _id })));
    expect(writes).toEqual([['a'], ['b', 'c', 'd']]);
    expect(outcomes.map((each) => each.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
    await expect(batches.insert({ _id: 'e' })).resolves.toBe('inserted');
  });

  it('fails only the documents a store refused for another reason than a duplicate', async () => {
    const { collection } = collectionAnswering((documents) =>
      documents.length === 1
        ? Promise.resolve({})
        : Promise.reject(
            bulkError([
              { index: 1, code: 2 },
              { index: 2, code: 11000 },
            ]),
          ),
    );
    const batches = new InsertBatches(collection);
    const outcomes = await Promise.allSettled(['a', 'b', 'c', 'd'].map((_id) => batches.insert({ _id })));
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 'inserted' },
      { status: 'fulfilled', value: 'inserted' },
      { status: 'rejected', reason: expect.any(MongoBulkWriteError) },
      { status: 'fulfilled', value: 'duplicate' },
    ]);
  });
});
