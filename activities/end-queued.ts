import type { TaskStore } from '../src/tasks/task-store';

/** Records a stopped chunk's items that never started cancelled, in one write. */
export function endQueuedActivity(taskStore: TaskStore) {
  return async function endQueued(taskIds: string[]): Promise<void> {
    await taskStore.endQueued(taskIds);
  };
}
