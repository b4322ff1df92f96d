import { refOf, type TaskChange } from '../src/tasks/task-document';
import type { TaskStore } from '../src/tasks/task-store';
import type { TaskRef } from '../src/task-events/task-event';

/**
 * Records a task's status change in the task store that `GET /tasks/{taskId}` reads. Runs started
 * before task events name the task by its id alone: its log is then looked up.
 */
export function recordTaskActivity(taskStore: TaskStore) {
  return async function recordTask(task: TaskRef | string, change: TaskChange): Promise<void> {
    const ref = typeof task === 'string' ? await refOfStored(taskStore, task) : task;
    await taskStore.updateUnconditionally(ref, change);
  };
}

async function refOfStored(taskStore: TaskStore, taskId: string): Promise<TaskRef> {
  const stored = await taskStore.find(taskId);
  return stored ? refOf(stored) : { taskId };
}
