import { EventEmitter } from 'node:events';
import { LogChanges } from '../task-events/log-changes';
import type { TaskDocument } from './task-document';

/** How often a waiting lookup re-reads its task, for the writes of workers in other processes. */
export interface RereadSchedule {
  firstMs: number;
  /** Each wait twice the last, up to this. */
  lastMs: number;
}

/**
 * With a worker in this process, a task requested here mostly ends here: its workflow starts eagerly
 * on this worker and records the task's end there, and the agent call (a regular activity of the
 * same task queue) often runs there too. Re-reads are then a safety net (a call another worker made,
 * a full worker, a restart) and each one costs a store round trip per waiting lookup.
 */
const REREADS_WITH_WORKER: RereadSchedule = { firstMs: 1_000, lastMs: 5_000 };
/** Without one, every end is written elsewhere and found only by re-reading. */
const REREADS_WITHOUT_WORKER: RereadSchedule = { firstMs: 250, lastMs: 2_000 };

/**
 * Tells lookups waiting in this process (TaskWaits) that a task's record in the task store changed,
 * and event feeds that a log grew (`logs`), when the worker or API that wrote it runs in the same
 * process. A writer elsewhere is not heard: waiters re-read the store too.
 */
export class TaskChanges {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  readonly rereads: RereadSchedule;
  /** Hears of every event the task stores of this process log, for the event feeds. */
  readonly logs = new LogChanges();

  constructor({ workerInProcess }: { workerInProcess: boolean }) {
    this.rereads = workerInProcess ? REREADS_WITH_WORKER : REREADS_WITHOUT_WORKER;
  }

  /** `task` as the write left it. */
  changed(task: TaskDocument): void {
    this.emitter.emit(task._id, task);
  }

  /**
   * The task as the next change of it left it; undefined when `ms` passed or `signal` aborted
   * first.
   */
  next(taskId: string, ms: number, signal: AbortSignal): Promise<TaskDocument | undefined> {
    return new Promise((resolve) => {
      const done = (task?: TaskDocument) => {
        clearTimeout(timer);
        this.emitter.off(taskId, done);
        signal.removeEventListener('abort', stop);
        resolve(task);
      };
      const stop = () => done();
      const timer = setTimeout(stop, ms);
      this.emitter.once(taskId, done);
      signal.addEventListener('abort', stop, { once: true });
    });
  }
}
