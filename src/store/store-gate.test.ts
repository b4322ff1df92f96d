import type { Collection } from 'mongodb';
import { StoreGate } from './store-gate';

/** A promise and the function that settles it. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
/** How long `exclusive` waits for the running calls here: they end when the test says, not by a clock. */
const DRAIN_MS = 60_000;

describe('StoreGate', () => {
  it('runs exclusive work once the running calls ended, and holds new calls back until it is done', async () => {
    const gate = new StoreGate();
    const events: string[] = [];
    const running = deferred();
    const first = gate.pass(async () => {
      await running.promise;
      events.push('running call ended');
    });
    const work = deferred();
    const exclusive = gate.exclusive(async () => {
      events.push('work started');
      await work.promise;
      events.push('work ended');
      return 'done';
    }, DRAIN_MS);
    const later = gate.pass(async () => events.push('later call ran'));
    await tick();
    expect(events).toEqual([]);
    running.resolve();
    await first;
    await tick();
    expect(events).toEqual(['running call ended', 'work started']);
    work.resolve();
    expect(await exclusive).toBe('done');
    await later;
    expect(events).toEqual(['running call ended', 'work started', 'work ended', 'later call ran']);
  });

  it('gives up without running the work when the running calls outlast the wait, and opens again', async () => {
    const gate = new StoreGate();
    const running = deferred();
    const slow = gate.pass(() => running.promise);
    const work = jest.fn(async () => 'done');
    expect(await gate.exclusive(work, 20)).toBeUndefined();
    expect(work).not.toHaveBeenCalled();
    expect(await gate.pass(async () => 'passes')).toBe('passes');
    running.resolve();
    await slow;
    expect(await gate.exclusive(work, 20)).toBe('done');
  });

  it('holds back the calls of a guarded collection that reach the server, cursors when read', async () => {
    const gate = new StoreGate();
    const calls: string[] = [];
    const cursor = { sort: () => cursor, toArray: async () => (calls.push('toArray'), []) };
    const collection = {
      collectionName: 'tasks',
      insertOne: async () => (calls.push('insertOne'), { acknowledged: true }),
      find: () => cursor,
    } as unknown as Collection;
    const guarded = gate.guard(collection);
    expect(guarded.collectionName).toBe('tasks');
    const work = deferred();
    const exclusive = gate.exclusive(() => work.promise, DRAIN_MS);
    const insert = guarded.insertOne({});
    const read = guarded.find({}).sort({ _id: 1 }).toArray();
    await tick();
    expect(calls).toEqual([]);
    work.resolve();
    await Promise.all([exclusive, insert, read]);
    expect(calls.sort()).toEqual(['insertOne', 'toArray']);
  });
});
