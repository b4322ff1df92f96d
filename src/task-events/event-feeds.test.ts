import type { Logger } from '../ops/logger';
import type { TaskEventDocument, TaskEventStore } from './event-store';
import { TaskEventFeeds } from './event-feeds';
import { LogChanges } from './log-changes';
import type { LogTasks } from './log-reader';
import { loggedTask } from '../../test/support/logged-task';
import type { TaskEvent } from './task-event';

const at = new Date('2026-11-27T09:00:00Z');
const pending = loggedTask(at);
const started: TaskEvent = { seq: 2, taskId: 't1', type: 'started', at: at.toISOString(), attempt: 1 };
const completed: TaskEvent = { seq: 3, taskId: 't1', type: 'completed', at: at.toISOString(), result: { ok: true } };
const logger = { warn: () => undefined } as unknown as Logger;
/** Polls that never come within a test: what the feed delivers is what was handed over or read first. */
const NO_POLLS = { streamPolls: { firstMs: 60_000, lastMs: 60_000 } };

/** A store whose reads are counted; `task` is what the task read answers, as the test moves it on. */
function countedStores() {
  const reads = { tasks: 0, events: 0 };
  const state = { task: pending, stored: new Map<number, TaskEventDocument>() };
  const taskStore: LogTasks = {
    find: async () => {
      reads.tasks += 1;
      return state.task;
    },
    findCompositionLog: async () => null,
  };
  const eventStore = {
    read: async (_logId: string, seqs: number[]) => {
      reads.events += seqs.length;
      return new Map([...state.stored].filter(([seq]) => seqs.includes(seq)));
    },
  } as unknown as TaskEventStore;
  return { reads, state, taskStore, eventStore };
}

/** Subscribes to t1's log; resolves the events delivered once it ended. */
function follow(feeds: TaskEventFeeds, waitsForEnd = false) {
  const delivered: TaskEvent[] = [];
  let firstRound: () => void;
  const readOnce = new Promise<void>((resolve) => (firstRound = resolve));
  const ended = new Promise<TaskEvent[]>((resolve, reject) => {
    feeds.subscribe(
      { kind: 'task', taskId: 't1' },
      {
        after: 0,
        waitsForEnd,
        deliver: (events) => {
          delivered.push(...events);
          firstRound();
        },
        missing: () => reject(new Error('missing')),
        ended: () => resolve(delivered),
      },
    );
  });
  return { readOnce, ended };
}

describe('TaskEventFeeds', () => {
  it('takes the events its process stores as they are handed over, reading none of them back', async () => {
    const { reads, taskStore, eventStore } = countedStores();
    const changes = new LogChanges();
    const feeds = new TaskEventFeeds(taskStore, eventStore, changes, logger, NO_POLLS);
    const { readOnce, ended } = follow(feeds);
    await readOnce;
    changes.logged('t1', () => started);
    changes.logged('t1', () => completed);
    expect((await ended).map((event) => event.type)).toEqual(['created', 'started', 'completed']);
    expect(reads).toEqual({ tasks: 1, events: 0 });
  });

  it('delivers an event handed over during a read after what the read found, in order', async () => {
    const { state, taskStore, eventStore } = countedStores();
    const changes = new LogChanges();
    // The first read finds the started event stored; the completion is handed over while it reads.
    state.task = { ...pending, eventSeq: 2 };
    state.stored.set(2, { _id: 't1:2', logId: 't1', seq: 2, taskId: 't1', type: 'started', at, data: '{"attempt":1}' });
    const slowTasks: LogTasks = {
      ...taskStore,
      find: async (taskId) => {
        const task = await taskStore.find(taskId);
        changes.logged('t1', () => completed);
        return task;
      },
    };
    const feeds = new TaskEventFeeds(slowTasks, eventStore, changes, logger, NO_POLLS);
    const { ended } = follow(feeds);
    expect((await ended).map((event) => event.seq)).toEqual([1, 2, 3]);
  });

  it('reads the log when an event handed over does not follow what it read', async () => {
    const { reads, state, taskStore, eventStore } = countedStores();
    const changes = new LogChanges();
    const feeds = new TaskEventFeeds(taskStore, eventStore, changes, logger, NO_POLLS);
    const { readOnce, ended } = follow(feeds);
    await readOnce;
    // The started event came from another process: only the completion is handed over here.
    state.task = { ...pending, status: 'completed', result: '{"ok":true}', eventSeq: 3 };
    state.stored.set(2, { _id: 't1:2', logId: 't1', seq: 2, taskId: 't1', type: 'started', at, data: '{"attempt":1}' });
    state.stored.set(3, { _id: 't1:3', logId: 't1', seq: 3, taskId: 't1', type: 'completed', at });
    changes.logged('t1', () => completed);
    expect((await ended).map((event) => event.type)).toEqual(['created', 'started', 'completed']);
    expect(reads.tasks).toBe(2);
  });

  it('reads a log only waited on as a waiting lookup re-reads its task, and one a stream reads as often as streams need', async () => {
    jest.useFakeTimers();
    try {
      const polls = { streamPolls: { firstMs: 100, lastMs: 100 }, endPolls: { firstMs: 1_000, lastMs: 1_000 } };
      const waited = countedStores();
      follow(new TaskEventFeeds(waited.taskStore, waited.eventStore, new LogChanges(), logger, polls), true);
      const streamed = countedStores();
      follow(new TaskEventFeeds(streamed.taskStore, streamed.eventStore, new LogChanges(), logger, polls));
      await jest.advanceTimersByTimeAsync(950);
      expect(waited.reads.tasks).toBe(1);
      expect(streamed.reads.tasks).toBe(10);
      await jest.advanceTimersByTimeAsync(100);
      expect(waited.reads.tasks).toBe(2);
    } finally {
      jest.useRealTimers();
    }
  });
});
