import type { Store } from '../store/mongo';
import type { LogChanges } from './log-changes';
import { LogWriter } from './log-writer';

const COLLECTIONS = { tasks: 'tasks', compositions: 'compositions' };

/** A store of composition counters whose writes take a tick, as FerretDB's do; each write is kept. */
function counterStore(eventSeq: number) {
  const writes: Array<{ _id: string; inc: number }> = [];
  const counters = new Map<string, number>([['c1', eventSeq]]);
  const compositions = {
    async findOneAndUpdate(filter: { _id: string }, update: { $inc: { eventSeq: number } }) {
      writes.push({ _id: filter._id, inc: update.$inc.eventSeq });
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (!counters.has(filter._id)) return null;
      counters.set(filter._id, counters.get(filter._id)! + update.$inc.eventSeq);
      return { _id: filter._id, eventSeq: counters.get(filter._id) };
    },
  };
  const store = { collection: (name: string) => (name === COLLECTIONS.compositions ? compositions : {}) };
  return { store: store as unknown as Store, writes };
}

describe('LogWriter', () => {
  it("hands a composition's concurrent writers, in every LogWriter of the process, dense seqs in turn from fewer writes", async () => {
    const { store, writes } = counterStore(10);
    const [api, worker] = [0, 1].map(() => new LogWriter(store, COLLECTIONS, {} as LogChanges));
    const asked = Array.from({ length: 20 }, (_, n) => (n % 2 === 0 ? api : worker).nextCompositionSeq('c1'));
    expect(await Promise.all(asked)).toEqual(Array.from({ length: 20 }, (_, n) => 11 + n));
    expect(writes).toEqual([
      { _id: 'c1', inc: 1 },
      { _id: 'c1', inc: 19 },
    ]);
  });
});
