import { TaskStatus } from '../../workflows/task-types';
import type { TaskChanges } from './task-changes';
import type { TaskDocument } from './task-document';
import type { TaskStore } from './task-store';

/** Lookups that wait for a task to leave `pending`: `GET /tasks/{taskId}?waitMs=`, A2A's SendMessage. */
export class TaskWaits {
  constructor(
    private readonly taskStore: Pick<TaskStore, 'find'>,
    private readonly changes: TaskChanges,
  ) {}

  /**
   * The task as soon as it is no longer pending (it ended, or it waits for input), or as it stands after `waitMs` or once `signal`
   * aborts. Every read goes through `admit`, which may refuse it by throwing (missing, not the
   * caller's). An update written through this process wakes the wait at once with the document it
   * wrote; one written by a worker elsewhere is found by re-reading, less often as the wait goes on.
   */
  async whenNotPending(
    taskId: string,
    waitMs: number,
    signal: AbortSignal,
    admit: (task: TaskDocument | null) => TaskDocument,
  ): Promise<TaskDocument> {
    const deadline = Date.now() + waitMs;
    const waiting = new AbortController();
    const stopWaiting = () => waiting.abort();
    signal.addEventListener('abort', stopWaiting, { once: true });
    try {
      let task: TaskDocument | undefined;
      const { firstMs, lastMs } = this.changes.rereads;
      for (let rereadMs = firstMs; ; rereadMs = Math.min(2 * rereadMs, lastMs)) {
        const remainingMs = deadline - Date.now();
        // Listening before reading: an update landing between the read and the wait still wakes it.
        const next = this.changes.next(taskId, Math.max(0, Math.min(rereadMs, remainingMs)), waiting.signal);
        task = admit(task ?? (await this.taskStore.find(taskId)));
        if (task.status !== TaskStatus.PENDING || remainingMs <= 0 || waiting.signal.aborted) return task;
        // Woken by a write in this process: the document it wrote; by the clock: read again.
        task = await next;
      }
    } finally {
      signal.removeEventListener('abort', stopWaiting);
      waiting.abort();
    }
  }
}
