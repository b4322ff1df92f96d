import { TaskPhase, TaskStatus } from '../../workflows/task-types';
import type { TaskDocument } from '../tasks/task-document';
import { toTaskView, type TaskView } from '../tasks/task-views';

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

/** The statuses of ours that an A2A state can stand for: none for AUTH_REQUIRED, which no task of ours is in. */
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
    case 'TASK_STATE_REJECTED':
      return [TaskStatus.SKIPPED];
    default:
      return [];
  }
}

/** The phases of a pending task whose agent is not called yet: waiting for its parents, or for its place in a map. */
const NOT_YET_CALLED: readonly TaskPhase[] = [TaskPhase.WAITING_FOR_PARENTS, TaskPhase.QUEUED];

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
    // A2A's "the agent has decided to not perform the task", a terminal state: the service decided it.
    case TaskStatus.SKIPPED:
      return 'TASK_STATE_REJECTED';
    default:
      return task.phase === undefined || NOT_YET_CALLED.includes(task.phase)
        ? 'TASK_STATE_SUBMITTED'
        : 'TASK_STATE_WORKING';
  }
}

/** The ids an A2A event names its task by. */
export interface A2aTaskIds {
  taskId: string;
  contextId: string;
}

/** The task's ids: its A2A context is the one its message was sent in, else the one its own id names. */
export function idsOf(task: Pick<TaskDocument, '_id' | 'contextId'>): A2aTaskIds {
  return { taskId: task._id, contextId: task.contextId ?? task._id };
}

/**
 * A task as A2A 1.0's Task, in its JSON form: the result as the data part of one artifact, a
 * failure's error as the data part of the status message, the input request's message and a skipped
 * task's skipReason likewise.
 */
export function a2aTask(task: TaskDocument): Record<string, unknown> {
  const view = toTaskView(task);
  const ids = idsOf(task);
  return {
    id: ids.taskId,
    contextId: ids.contextId,
    status: a2aStatus(ids, a2aState(view), view.updatedAt, view.error ?? view.inputRequest ?? view.skipReason),
    artifacts: view.result === undefined ? [] : [resultArtifact(view.result)],
    history: [],
    metadata: { agentId: view.agentId, operation: view.operation },
  };
}

/** A2A's TaskStatus: the state, when, and what the service has to say (an error, an input request) as a data part of the agent's message. */
export function a2aStatus(
  ids: A2aTaskIds,
  state: string,
  timestamp: string,
  data?: unknown,
  messageId = `${ids.taskId}-status`,
): Record<string, unknown> {
  return {
    state,
    timestamp,
    ...(data === undefined
      ? {}
      : {
          message: {
            messageId,
            ...ids,
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
