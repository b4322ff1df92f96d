import { memoryChangeLog } from '../../test/support/memory-change-log';
import { IdIndex } from './id-index';
import { LiveCopy } from './live-copy';

/** A LiveCopy over a change log in memory, recording what it reads of the data. */
function setUp() {
  const { log, changedIds, reads } = memoryChangeLog();
  const calls = { readAll: 0, refreshed: [] as string[][] };
  const data = {
    load: async () => {
      calls.readAll += 1;
    },
    install: () => undefined,
    refresh: async (ids: string[]) => {
      calls.refreshed.push(ids);
    },
  };
  return { changedIds, copy: new LiveCopy(log, data, 60_000), calls, reads };
}

describe('LiveCopy', () => {
  afterEach(() => jest.useRealTimers());

  it('reads the data whole once, then refreshes only the documents changed since', async () => {
    const { changedIds, copy, calls } = setUp();
    changedIds.push('a');
    await copy.catchUp();
    await copy.catchUp();
    expect(calls).toEqual({ readAll: 1, refreshed: [] });
    changedIds.push('b', 'c', 'b');
    await copy.catchUp();
    expect(calls).toEqual({ readAll: 1, refreshed: [['b', 'c']] });
  });

  it('waits for a change number not yet recorded, then reads whole', async () => {
    jest.useFakeTimers({ now: 0, doNotFake: ['nextTick', 'setImmediate'] });
    const { changedIds, copy, calls } = setUp();
    await copy.catchUp();
    changedIds.push('a', undefined, 'c');
    await copy.catchUp();
    // Past 'a' at once; the missing number is looked at again by each of a request's bounded rounds.
    expect(calls.readAll).toBe(1);
    expect(calls.refreshed).toEqual([['a', 'c'], ['c'], ['c']]);
    changedIds[1] = 'b';
    await copy.catchUp();
    expect(calls.refreshed.at(-1)).toEqual(['b', 'c']);
    changedIds.push(undefined);
    await copy.catchUp();
    jest.setSystemTime(2_500);
    await copy.catchUp();
    expect(calls.readAll).toBe(2);
  });

  it('reads whole again in the background once older than its age, answering meanwhile', async () => {
    jest.useFakeTimers({ now: 0, doNotFake: ['nextTick', 'setImmediate'] });
    const { changedIds, copy, calls } = setUp();
    await copy.catchUp();
    jest.setSystemTime(60_000);
    changedIds.push('a');
    await copy.catchUp();
    expect(calls.refreshed).toEqual([['a']]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.readAll).toBe(2);
  });

  it("shares reads of the log's number among the requests that arrive while one is under way, each seeing every change recorded before it", async () => {
    const { changedIds, copy, calls, reads } = setUp();
    await copy.catchUp();
    reads.counter = 0;
    // The first read is under way when the change is recorded: the requests after the change share a later read.
    const first = copy.catchUp();
    changedIds.push('a');
    await Promise.all([first, ...Array.from({ length: 15 }, () => copy.catchUp())]);
    expect(reads.counter).toBe(2);
    expect(calls.refreshed).toEqual([['a']]);
  });

  it("serves a catch-up that accepts a bound from a read of the log's number begun within it, and a strict one reads again", async () => {
    jest.useFakeTimers({ now: 0, doNotFake: ['nextTick', 'setImmediate'] });
    const { changedIds, copy, calls, reads } = setUp();
    await copy.catchUp();
    reads.counter = 0;
    jest.setSystemTime(5_000);
    changedIds.push('a');
    await copy.catchUp({ readWithinMs: 1_000 });
    jest.setSystemTime(5_999);
    changedIds.push('b');
    await copy.catchUp({ readWithinMs: 1_000 });
    expect(reads.counter).toBe(1);
    expect(calls.refreshed).toEqual([['a']]);
    await copy.catchUp();
    expect(reads.counter).toBe(2);
    expect(calls.refreshed).toEqual([['a'], ['b']]);
    // A read begun 1 s ago or more serves no longer; nor one begun before a change of this process.
    jest.setSystemTime(7_000);
    await copy.catchUp({ readWithinMs: 1_000 });
    expect(reads.counter).toBe(3);
    changedIds.push('c');
    copy.changedHere();
    await copy.catchUp({ readWithinMs: 1_000 });
    expect(reads.counter).toBe(4);
    expect(calls.refreshed.at(-1)).toEqual(['c']);
  });

  it('reads whole when it is further behind than the log keeps', async () => {
    const { changedIds, copy, calls } = setUp();
    await copy.catchUp();
    changedIds.push(...Array.from({ length: 6_000 }, (_, index) => `x${index}`));
    await copy.catchUp();
    expect(calls).toEqual({ readAll: 2, refreshed: [] });
  });
});

describe('IdIndex', () => {
  it('keeps entries in id order, replaces by id and pages after an id', () => {
    const index = new IdIndex<{ id: string; n: number }>();
    for (const id of ['c', 'a', 'e', 'b']) index.set({ id, n: 1 });
    index.set({ id: 'c', n: 2 });
    index.delete('e');
    index.delete('zz');
    expect(index.page(10, undefined)).toEqual([
      { id: 'a', n: 1 },
      { id: 'b', n: 1 },
      { id: 'c', n: 2 },
    ]);
    expect(index.page(1, 'a')).toEqual([{ id: 'b', n: 1 }]);
    expect(index.page(10, 'bb', (entry) => entry.n === 2)).toEqual([{ id: 'c', n: 2 }]);
    expect(index.get('c')).toEqual({ id: 'c', n: 2 });
    expect(index.get('d')).toBeUndefined();
  });
});
