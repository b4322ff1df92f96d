import { EventEmitter } from 'node:events';
import type { TaskDocument } from './task-index';

/**
 * Tells lookups waiting in this process (`GET /tasks/{taskId}?waitMs=`) that a task's index entry
 * changed, when the worker that wrote it runs in the same process. A worker elsewhere is not heard:
 * waiters re-read the index on their own schedule too.
 */
export class TaskChanges {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

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
