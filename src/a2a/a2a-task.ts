import { TaskPhase, TaskStatus } from '../../workflows/task-types';
import type { TaskView } from '../tasks/task-views';

/** Our statuses (and a pending task's phase) as A2A 1.0's task states (docs/a2a.md). */
export function a2aState(task: Pick<TaskView, 'status' | 'phase'>): string {
  switch (task.status) {
    case TaskStatus.COMPLETED:
      return 'TASK_STATE_COMPLETED';
    case TaskStatus.FAILED:
      return 'TASK_STATE_FAILED';
    case TaskStatus.CANCELLED:
      return 'TASK_STATE_CANCELED';
    case TaskStatus.INPUT_REQUIRED:
      return 'TASK_STATE_INPUT_REQUIRED';
    default:
      return task.phase === undefined || task.phase === TaskPhase.WAITING_FOR_PARENTS
        ? 'TASK_STATE_SUBMITTED'
        : 'TASK_STATE_WORKING';
  }
}

/**
 * A task as A2A 1.0's Task, in its JSON form: the result as the data part of one artifact, a
 * failure's error as the data part of the status message, the input request's message likewise.
 */
export function a2aTask(task: TaskView): Record<string, unknown> {
  const statusData = task.error ?? task.inputRequest;
  return {
    id: task.taskId,
    contextId: task.taskId,
    status: {
      state: a2aState(task),
      timestamp: task.updatedAt,
      ...(statusData === undefined
        ? {}
        : {
            message: {
              messageId: `${task.taskId}-status`,
              taskId: task.taskId,
              contextId: task.taskId,
              role: 'ROLE_AGENT',
              parts: [{ data: statusData }],
            },
          }),
    },
    artifacts:
      task.result === undefined ? [] : [{ artifactId: 'result', name: 'result', parts: [{ data: task.result }] }],
    history: [],
    metadata: { agentId: task.agentId, operation: task.operation },
  };
}
