import { MongoServerError, type Document } from 'mongodb';
import type { Store } from '../../src/store/mongo';

/**
 * A Store in memory, for unit tests of what is kept in it by `_id`: `insertOne` (a taken `_id` is a
 * duplicate key), `findOne`, `deleteOne` and `findOneAndUpdate` with `$inc` (a counter). Several
 * objects over one `store` are several processes over one database. `reads[collection]` counts its
 * `findOne`s; a read of a collection in `heldReads` takes the document as it is, then waits for
 * that promise before it answers (a read that overlaps a write).
 */
export function memoryStore() {
  const collections = new Map<string, Map<string, Document>>();
  const reads: Record<string, number> = {};
  const heldReads: Record<string, Promise<void>> = {};
  const documentsOf = (name: string) => {
    if (!collections.has(name)) collections.set(name, new Map());
    return collections.get(name)!;
  };
  const collection = (name: string) => {
    const documents = documentsOf(name);
    return {
      insertOne: async (document: Document) => {
        if (documents.has(document._id)) throw new MongoServerError({ message: 'E11000 duplicate key', code: 11000 });
        documents.set(document._id, structuredClone(document));
        return { acknowledged: true, insertedId: document._id };
      },
      findOne: async ({ _id }: { _id: string }) => {
        reads[name] = (reads[name] ?? 0) + 1;
        const found = documents.get(_id);
        const answer = found ? structuredClone(found) : null;
        await heldReads[name];
        return answer;
      },
      deleteOne: async ({ _id }: { _id: string }) => ({ deletedCount: Number(documents.delete(_id)) }),
      findOneAndUpdate: async ({ _id }: { _id: string }, { $inc }: { $inc: Record<string, number> }) => {
        const document = documents.get(_id) ?? { _id };
        for (const [field, by] of Object.entries($inc)) document[field] = ((document[field] as number) ?? 0) + by;
        documents.set(_id, document);
        return structuredClone(document);
      },
    };
  };
  return { store: { collection } as unknown as Store, reads, heldReads };
}
