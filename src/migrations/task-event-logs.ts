import { COMPOSITIONS_COLLECTION, TASKS_COLLECTION, type TaskDocument } from '../tasks/task-document';
import type { Store } from '../store/mongo';
import { isLive } from '../../workflows/task-types';
import type { Migration } from './migration';

interface LegacyComposition {
  _id: string;
  taskIds: string[];
  eventSeq?: number;
}

/**
 * Gives the tasks and compositions stored before event logs the counters their logs start from:
 * a task of its own has had its created event (seq 1); a composition its tasks' created events
 * (seqs 1 to n), then the end of each task that ended, in order. Without them, the first event
 * written would take a created event's seq, and a composition's stream would wait for ends that
 * were never logged. Idempotent: a second run finds no document without a counter.
 */
export const taskEventLogs: Migration = {
  name: 'task event logs',
  doneOnceAs: 'task-event-logs',
  async run(store: Store): Promise<number> {
    const tasks = store.collection<TaskDocument>(TASKS_COLLECTION);
    const compositions = store.collection<LegacyComposition>(COMPOSITIONS_COLLECTION);
    let changed = (
      await tasks.updateMany(
        { compositionId: { $exists: false }, eventSeq: { $exists: false } },
        { $set: { eventSeq: 1 } },
      )
    ).modifiedCount;
    const legacy = await compositions.find({ eventSeq: { $exists: false } }).toArray();
    for (const composition of legacy) {
      let seq = composition.taskIds.length;
      for (const taskId of composition.taskIds) {
        const task = await tasks.findOne({ _id: taskId });
        if (!task || isLive(task.status) || task.endSeq !== undefined) continue;
        seq += 1;
        await tasks.updateOne({ _id: taskId }, { $set: { endSeq: seq } });
      }
      changed += (
        await compositions.updateOne(
          { _id: composition._id, eventSeq: { $exists: false } },
          { $set: { eventSeq: seq } },
        )
      ).modifiedCount;
    }
    return changed;
  },
};
