import { isLive } from '../../workflows/task-types';
import type { TaskEventStore, TaskEventDocument } from './event-store';
import { createdEvent, endingEvent, storedEvent, type LoggedTask } from './logged-events';
import { ENDING_EVENTS, type TaskEvent } from './task-event';

export type { LoggedTask } from './logged-events';

/** Where a log reads its tasks and a composition's counter. */
export interface LogTasks {
  find(taskId: string): Promise<LoggedTask | null>;
  /** The composition's tasks, in order, and the last seq of its log. */
  findCompositionLog(compositionId: string): Promise<{ taskIds: string[]; eventSeq: number } | null>;
}

/** A log to read: a task's own (a task outside any composition), or a composition's. */
export type LogSource = { kind: 'task'; taskId: string } | { kind: 'composition'; compositionId: string };

export const logIdOfSource = (source: LogSource): string =>
  source.kind === 'task' ? source.taskId : source.compositionId;

/**
 * How long a reader waits for a seq handed out and not yet stored before it moves past it: the
 * writer may be between taking the seq and storing the event, or may have died between the two.
 */
export const GAP_WAIT_MS = 2_000;
/** Most seqs read in one round. */
const PAGE = 200;

const isEnded = (task: LoggedTask): boolean => !isLive(task.status);

/**
 * Reads one log into events, in seq order, round after round (`next`). The created events are drawn
 * from the task documents; every other event is read by `_id` (its log and seq), an ending one with
 * the outcome its task holds. A seq with nothing behind it is waited for GAP_WAIT_MS, then
 * skipped, unless a task ended there (its end recorded, the event's insert lost to a crash).
 */
export class LogReader {
  /** Every event read so far, in seq order. */
  readonly events: TaskEvent[] = [];
  /** Tasks of the log, by id, as last read; in position order. */
  private tasks = new Map<string, LoggedTask>();
  private taskIds: string[] = [];
  private readonly endedTasks = new Set<string>();
  private gapSince?: number;
  private loaded = false;
  private cursor: number;

  /** Reads the events after `startAfter` only; those before are not even looked up. */
  constructor(
    private readonly source: LogSource,
    private readonly taskStore: LogTasks,
    private readonly eventStore: TaskEventStore,
    readonly startAfter = 0,
  ) {
    this.cursor = startAfter;
  }

  get logId(): string {
    return logIdOfSource(this.source);
  }

  /** False until the log's tasks were read; then whether the log exists. */
  get exists(): boolean {
    return this.taskIds.length > 0;
  }

  /** Every task of the log ended, and its ending event was read. */
  get done(): boolean {
    return this.loaded && this.taskIds.length > 0 && this.endedTasks.size === this.taskIds.length;
  }

  hasEnded(taskId: string): boolean {
    return this.endedTasks.has(taskId);
  }

  /** Whether a hole holds the reader back, and since when. */
  get waitingSince(): number | undefined {
    return this.gapSince;
  }

  /**
   * Reads what the log gained since the last round; returns the new events. A round counts only
   * once it read all it found: one whose read fails leaves the reader where it was, to read again.
   */
  async next(): Promise<TaskEvent[]> {
    const lastSeq = await this.readHead();
    const found: TaskEvent[] = [];
    let cursor = this.cursor;
    while (cursor < lastSeq) {
      const from = cursor + 1;
      const seqs = Array.from({ length: Math.min(PAGE, lastSeq - cursor) }, (_, index) => from + index);
      const stored = await this.eventStore.read(
        this.logId,
        seqs.filter((seq) => seq > this.createdCount()),
      );
      for (const seq of seqs) {
        const event = await this.eventAt(seq, stored.get(seq));
        if (event === 'wait') return this.keep(found, cursor);
        cursor = seq;
        this.gapSince = undefined;
        if (event) found.push(event);
      }
    }
    return this.keep(found, cursor);
  }

  /**
   * Takes an event its writer handed over in this process (LogChanges) without reading the store:
   * 'taken' when it is the next one after what was read; 'read' when it was read already; 'ahead'
   * when events before it are still to read (or the log's tasks are not read yet), for a round to
   * read them.
   */
  offer(event: TaskEvent): 'taken' | 'read' | 'ahead' {
    if (event.seq <= this.cursor) return 'read';
    if (!this.loaded || event.seq !== this.cursor + 1 || !this.tasks.has(event.taskId)) return 'ahead';
    this.gapSince = undefined;
    this.keep([event], event.seq);
    return 'taken';
  }

  private keep(found: TaskEvent[], cursor: number): TaskEvent[] {
    this.cursor = cursor;
    for (const event of found) {
      this.events.push(event);
      if (ENDING_EVENTS.has(event.type)) this.endedTasks.add(event.taskId);
    }
    return found;
  }

  /** Seqs of the created events: one per task, first in the log. */
  private createdCount(): number {
    return this.taskIds.length;
  }

  /** The last seq handed out; reads the tasks too (a task's own log: its counter is on it). */
  private async readHead(): Promise<number> {
    if (this.source.kind === 'task') {
      const task = await this.taskStore.find(this.source.taskId);
      this.loaded = true;
      if (!task) return 0;
      this.tasks.set(task._id, task);
      this.taskIds = [task._id];
      this.endedBeforeStart();
      return Math.max(task.eventSeq ?? 1, isEnded(task) ? (endSeqOf(task, true) ?? 0) : 0);
    }
    const log = await this.taskStore.findCompositionLog(this.source.compositionId);
    if (!log) {
      this.loaded = true;
      return 0;
    }
    if (!this.loaded) {
      this.taskIds = log.taskIds;
      await this.readTasks();
      this.endedBeforeStart();
      this.loaded = true;
    }
    return log.eventSeq;
  }

  /** Tasks whose ending event comes at or before `startAfter`: ended for this reader, which never reads it. */
  private endedBeforeStart(): void {
    for (const task of this.tasks.values()) {
      const endSeq = endSeqOf(task, this.source.kind === 'task');
      if (isEnded(task) && endSeq !== undefined && endSeq <= this.startAfter) this.endedTasks.add(task._id);
    }
  }

  private async readTasks(): Promise<void> {
    const documents = await Promise.all(this.taskIds.map((id) => this.taskStore.find(id)));
    for (const document of documents) if (document) this.tasks.set(document._id, document);
  }

  /** The event at `seq`; undefined for a seq skipped; 'wait' while a hole may still be filled. */
  private async eventAt(seq: number, stored: TaskEventDocument | undefined): Promise<TaskEvent | undefined | 'wait'> {
    if (seq <= this.createdCount()) {
      const task = this.tasks.get(this.taskIds[seq - 1]);
      return task && createdEvent(task, seq);
    }
    if (stored) {
      if (!ENDING_EVENTS.has(stored.type)) return storedEvent(stored);
      // An ended task changes no more: read ended, it holds its outcome already.
      const read = this.tasks.get(stored.taskId);
      const task = read && isEnded(read) ? read : await this.taskStore.find(stored.taskId);
      return task ? endingEvent(task, seq) : undefined;
    }
    const ending = this.taskEndingAt(seq);
    if (ending) return endingEvent(ending, seq);
    this.gapSince ??= Date.now();
    if (Date.now() - this.gapSince < GAP_WAIT_MS) return 'wait';
    // A composition task's end whose event was never stored: its endSeq says where it goes.
    if (this.source.kind === 'composition') {
      await this.readTasks();
      const found = this.taskEndingAt(seq);
      if (found) return endingEvent(found, seq);
    }
    return undefined;
  }

  private taskEndingAt(seq: number): LoggedTask | undefined {
    for (const task of this.tasks.values()) {
      if (!isEnded(task)) continue;
      if (endSeqOf(task, this.source.kind === 'task') === seq) return task;
    }
    return undefined;
  }
}

/**
 * Where the task's end is in its log: `endSeq` when its writer had to move it; else, in a task's
 * own log, the counter's last seq, which the ending write took (never the created event's: tasks
 * stored before events have no counter).
 */
const endSeqOf = (task: LoggedTask, ownLog: boolean): number | undefined =>
  task.endSeq ?? (ownLog ? Math.max(task.eventSeq ?? 1, 2) : undefined);
