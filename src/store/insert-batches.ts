import { MongoBulkWriteError, type Collection, type Document, type OptionalUnlessRequiredId } from 'mongodb';
import { isDuplicateKey } from './mongo';

/** Documents one write carries at most. */
export const MAX_BATCH = 100;

/** What became of one document: written, or refused as a duplicate of a stored `_id`. */
export type Inserted = 'inserted' | 'duplicate';

interface Waiting<T> {
  document: T;
  settle: (outcome: Inserted) => void;
  fail: (error: unknown) => void;
}

/**
 * Inserts into one collection, those that arrive while a write is under way carried by the next
 * one together: a store answers ten documents in one `insert` for little more than one, and a
 * burst of callers then costs it a write per burst rather than per caller. A lone document goes
 * as `insertOne`, as it would without the batches (the driver's bulk path costs more CPU). Each
 * caller hears of its own document only: a duplicate `_id` refuses that one, not the others.
 */
export class InsertBatches<T extends Document> {
  private waiting: Waiting<T>[] = [];
  private writing = false;

  constructor(
    private readonly collection: Collection<T>,
    private readonly maxBatch = MAX_BATCH,
  ) {}

  insert(document: T): Promise<Inserted> {
    return new Promise<Inserted>((settle, fail) => {
      this.waiting.push({ document, settle, fail });
      if (!this.writing) void this.writeWaiting();
    });
  }

  private async writeWaiting(): Promise<void> {
    this.writing = true;
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      await (batch.length === 1 ? this.writeOne(batch[0]) : this.writeMany(batch));
    }
    this.writing = false;
  }

  private async writeOne({ document, settle, fail }: Waiting<T>): Promise<void> {
    try {
      await this.collection.insertOne(document as OptionalUnlessRequiredId<T>);
      settle('inserted');
    } catch (error) {
      if (isDuplicateKey(error)) settle('duplicate');
      else fail(error);
    }
  }

  private async writeMany(batch: Waiting<T>[]): Promise<void> {
    try {
      await this.collection.insertMany(
        batch.map(({ document }) => document as OptionalUnlessRequiredId<T>),
        { ordered: false },
      );
      for (const each of batch) each.settle('inserted');
    } catch (error) {
      // Without a write result (the network, a closed client; a write concern not met) no document counts as written.
      const refusals = error instanceof MongoBulkWriteError ? [error.writeErrors].flat() : [];
      if (refusals.length === 0) {
        for (const each of batch) each.fail(error);
        return;
      }
      const refused = new Map(refusals.map((writeError) => [writeError.index, writeError]));
      batch.forEach((each, index) => {
        const writeError = refused.get(index);
        if (!writeError) each.settle('inserted');
        else if (writeError.code === 11000) each.settle('duplicate');
        else each.fail(error);
      });
    }
  }
}
