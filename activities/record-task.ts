import type { TaskChange, TaskIndex } from '../src/tasks/task-index';

/** Records a task's status change in the task index that `GET /tasks/{taskId}` reads. */
export function recordTaskActivity(index: TaskIndex) {
  return async function recordTask(taskId: string, change: TaskChange): Promise<void> {
    await index.recordByWorkflow(taskId, change);
  };
}
