import { TaskPhase, TaskStatus } from '../../workflows/task-types';
import type { TaskView } from '../tasks/task-views';

/** A2A 1.0's task states, as its JSON names them. */
export const A2A_TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;

/** The statuses of ours that an A2A state can stand for: none for REJECTED and AUTH_REQUIRED, which no task of ours is in. */
export function statusesOf(state: string): TaskStatus[] {
  switch (state) {
    case 'TASK_STATE_SUBMITTED':
    case 'TASK_STATE_WORKING':
      return [TaskStatus.PENDING];
    case 'TASK_STATE_COMPLETED':
      return [TaskStatus.COMPLETED];
    case 'TASK_STATE_FAILED':
      return [TaskStatus.FAILED];
    case 'TASK_STATE_CANCELED':
      return [TaskStatus.CANCELLED];
    case 'TASK_STATE_INPUT_REQUIRED':
      return [TaskStatus.INPUT_REQUIRED];
    default:
      return [];
  }
}

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
  return {
    id: task.taskId,
    contextId: task.taskId,
    status: a2aStatus(task.taskId, a2aState(task), task.updatedAt, task.error ?? task.inputRequest),
    artifacts: task.result === undefined ? [] : [resultArtifact(task.result)],
    history: [],
    metadata: { agentId: task.agentId, operation: task.operation },
  };
}

/** A2A's TaskStatus: the state, when, and what the service has to say (an error, an input request) as a data part of the agent's message. */
export function a2aStatus(
  taskId: string,
  state: string,
  timestamp: string,
  data?: unknown,
  messageId = `${taskId}-status`,
): Record<string, unknown> {
  return {
    state,
    timestamp,
    ...(data === undefined
      ? {}
      : {
          message: {
            messageId,
            taskId,
            contextId: taskId,
            role: 'ROLE_AGENT',
            parts: [{ data }],
          },
        }),
  };
}

/** The task's result as A2A's Artifact: its one data part. */
export function resultArtifact(result: unknown): Record<string, unknown> {
  return { artifactId: 'result', name: 'result', parts: [{ data: result }] };
}
