import type { Store } from '../store/mongo';
import { SeqBatches } from '../store/seq-batches';
import { TaskEventStore, type TaskEventDocument } from './event-store';
import type { LogChanges } from './log-changes';
import { endingEvent, storedEvent, type LoggedTask } from './logged-events';
import { ENDING_EVENTS, logIdOf, type LoggedEvent, type TaskEventType, type TaskRef } from './task-event';

/** The collections of the documents that hold the logs' counters. */
export interface CounterCollections {
  /** A task counts its own log (`eventSeq`) and says where its end is (`endSeq`). */
  tasks: string;
  /** A composition counts its log (`eventSeq`). */
  compositions: string;
}

/** The counter fields of a task or a composition. */
interface CounterDocument {
  _id: string;
  eventSeq?: number;
  endSeq?: number;
}

/**
 * The seqs of the composition logs, by store and counter collection: every LogWriter of a process
 * takes them through one SeqBatches, one write per counter at a time, since writes that raced would
 * take the same seq where an update is not atomic (src/store/mongo.ts). Writers in other processes
 * still may race; they then take the seqs above (LogWriter.append).
 */
const compositionSeqs = new WeakMap<Store, Map<string, SeqBatches>>();

/** How many seqs above the one it was given a writer tries. */
const SEQ_TRIES = 20;

/**
 * Stores the events of the task logs under the seqs it hands out. A log's counter is kept on the
 * document the log belongs to: a composition's on the composition, taken here; a task's own log's
 * on the task, taken by the task store's write of the change the event tells of, in the same update
 * (src/tasks/task-store.ts).
 */
export class LogWriter {
  private readonly events: TaskEventStore;
  private readonly compositionSeqs: SeqBatches;

  constructor(
    private readonly store: Store,
    private readonly collections: CounterCollections,
    private readonly changes: LogChanges,
  ) {
    this.events = new TaskEventStore(store);
    const ofStore = compositionSeqs.get(store) ?? new Map<string, SeqBatches>();
    compositionSeqs.set(store, ofStore);
    if (!ofStore.has(collections.compositions))
      ofStore.set(collections.compositions, new SeqBatches((id, count) => this.reserveCompositionSeqs(id, count)));
    this.compositionSeqs = ofStore.get(collections.compositions)!;
  }

  private get tasks() {
    return this.store.collection<CounterDocument>(this.collections.tasks);
  }

  private get compositions() {
    return this.store.collection<CounterDocument>(this.collections.compositions);
  }

  /**
   * The next seq of a composition's log. Asked for while the counter's write is under way, it comes
   * with those asked for meanwhile from the next one (SeqBatches), in the order they were asked for.
   */
  nextCompositionSeq(compositionId: string): Promise<number> {
    return this.compositionSeqs.next(compositionId);
  }

  /**
   * Moves a composition's counter by `count` and returns the first seq it reserved. The whole
   * document comes back: FerretDB's findAndModify takes no projection. Without the document, the
   * seqs from 1 (append moves past those taken).
   */
  private async reserveCompositionSeqs(compositionId: string, count: number): Promise<number> {
    const counted = await this.compositions.findOneAndUpdate(
      { _id: compositionId },
      { $inc: { eventSeq: count } },
      { returnDocument: 'after' },
    );
    return (counted?.eventSeq ?? count) - count + 1;
  }

  /**
   * Stores the event under `seq` exactly, the seq the task's own write took for it: one found taken
   * is this event, stored by an earlier try of the same write (a retried activity), and stays as it
   * is. The feeds get it as `append` gives them, only when stored here.
   */
  async appendOnce(
    task: TaskRef,
    event: LoggedEvent | { type: TaskEventType },
    seq: number,
    ended?: LoggedTask,
  ): Promise<void> {
    const logId = logIdOf(task);
    const stored = await this.events.insert(logId, seq, task.taskId, event);
    if (!stored) return;
    this.changes.logged(logId, () =>
      ENDING_EVENTS.has(event.type) ? ended && endingEvent(ended, seq) : storedEvent(stored),
    );
  }

  /**
   * Stores the event under `first`, the seq handed out to this writer, or the one above. The insert is
   * the claim of the seq: one found taken was handed out twice, as an `$inc` lost on a store without
   * atomic updates does, and leaves the counter behind the stored seqs. The writer then takes the
   * seqs above in turn, and moves the counter past the one it stored; an ending event that moved
   * records its seq on the task, where readers look for an end whose event is missing. Runs in the
   * task's turn (TaskStore), whose document it may write. The feeds of this process get the event as
   * a reader would read it; an ending one only with `ended`, the task as its ending write left it.
   */
  async append(
    task: TaskRef,
    event: LoggedEvent | { type: TaskEventType },
    first: number,
    ended?: LoggedTask,
  ): Promise<void> {
    const logId = logIdOf(task);
    let next = first;
    let stored: TaskEventDocument | undefined;
    for (let tries = 1; !(stored = await this.events.insert(logId, next, task.taskId, event)); tries += 1) {
      if (tries === SEQ_TRIES) throw new Error(`No free seq for an event of task ${task.taskId} after ${tries} tries`);
      next += 1;
    }
    if (next !== first) {
      const counter = { $max: { eventSeq: next } };
      if (task.compositionId === undefined) await this.tasks.updateOne({ _id: task.taskId }, counter);
      else await this.compositions.updateOne({ _id: task.compositionId }, counter);
      if (ENDING_EVENTS.has(event.type)) await this.tasks.updateOne({ _id: task.taskId }, { $set: { endSeq: next } });
    }
    const written = stored;
    this.changes.logged(logId, () =>
      ENDING_EVENTS.has(event.type) ? ended && endingEvent(ended, next) : storedEvent(written),
    );
  }
}
