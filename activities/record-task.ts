import type { TaskChange, TaskStore } from '../src/tasks/task-store';

/** Records a task's status change in the task store that `GET /tasks/{taskId}` reads. */
export function recordTaskActivity(taskStore: TaskStore) {
  return async function recordTask(taskId: string, change: TaskChange): Promise<void> {
    await taskStore.updateUnconditionally(taskId, change);
  };
}
