import type { TaskEventDocument, TaskEventStore } from './event-store';
import { loggedTask } from '../../test/support/logged-task';
import { LogReader, type LoggedTask, type LogTasks } from './log-reader';

const at = new Date('2026-11-23T12:00:00Z');

const task = (overrides: Partial<LoggedTask>) => loggedTask(at, overrides);

const progress = (seq: number): TaskEventDocument => ({
  _id: `t1:${seq}`,
  logId: 't1',
  seq,
  taskId: 't1',
  type: 'progress',
  at,
  data: JSON.stringify({ message: `m${seq}` }),
});

/** An event store holding t1's progress (seq 2) and its completion (seq 3). */
function progressThenCompleted(): TaskEventStore {
  const ending: TaskEventDocument = { _id: 't1:3', logId: 't1', seq: 3, taskId: 't1', type: 'completed', at };
  const events = new Map<number, TaskEventDocument>([
    [2, progress(2)],
    [3, ending],
  ]);
  return { read: async () => new Map(events) } as unknown as TaskEventStore;
}

describe('LogReader', () => {
  it('reads a round again after a failed read, losing none of its events', async () => {
    const ended = task({ eventSeq: 3, status: 'completed', result: '{"ok":true}' });
    const reads: string[] = [];
    // The task ends between the first round's two reads of it: the second one, the ending event's
    // outcome, fails.
    const taskStore = {
      find: async () => {
        reads.push('task');
        if (reads.length === 2) throw new Error('store went away');
        return reads.length === 1 ? task({ eventSeq: 3 }) : ended;
      },
    } as unknown as LogTasks;
    const eventStore = progressThenCompleted();
    const reader = new LogReader({ kind: 'task', taskId: 't1' }, taskStore, eventStore);
    await expect(reader.next()).rejects.toThrow('store went away');
    expect(reader.events).toEqual([]);
    expect(await reader.next()).toEqual([
      { seq: 1, taskId: 't1', type: 'created', at: at.toISOString(), agentId: 'a1', operation: 'tools/echo' },
      { seq: 2, taskId: 't1', type: 'progress', at: at.toISOString(), message: 'm2' },
      { seq: 3, taskId: 't1', type: 'completed', at: at.toISOString(), result: { ok: true } },
    ]);
    expect(reader.done).toBe(true);
  });

  it('reads an ended task once per round: the task read ended holds the outcome of its ending event', async () => {
    let reads = 0;
    const taskStore = {
      find: async () => {
        reads += 1;
        return task({ eventSeq: 3, status: 'completed', result: '{"ok":true}' });
      },
    } as unknown as LogTasks;
    const eventStore = progressThenCompleted();
    const reader = new LogReader({ kind: 'task', taskId: 't1' }, taskStore, eventStore);
    expect((await reader.next()).map((event) => event.type)).toEqual(['created', 'progress', 'completed']);
    expect(reader.events.at(-1)).toMatchObject({ type: 'completed', result: { ok: true } });
    expect(reader.done).toBe(true);
    expect(reads).toBe(1);
  });

  it('starting after the end of an ended task, reads nothing and is done at once', async () => {
    const taskStore = {
      find: async () => task({ eventSeq: 3, status: 'failed', error: '"x"' }),
    } as unknown as LogTasks;
    const eventStore = { read: async () => new Map() } as unknown as TaskEventStore;
    const reader = new LogReader({ kind: 'task', taskId: 't1' }, taskStore, eventStore, 3);
    expect(await reader.next()).toEqual([]);
    expect(reader.done).toBe(true);
  });
});
