import type { SkipReason, TaskError, TaskResult } from '../../workflows/task-types';

/** What happened to a task, in the order of its event log (docs/api.md, "Task events"). */
export const TaskEventType = {
  CREATED: 'created',
  STARTED: 'started',
  ATTEMPT_FAILED: 'attempt_failed',
  ACCEPTED: 'accepted',
  PROGRESS: 'progress',
  INPUT_REQUIRED: 'input_required',
  INPUT_RECEIVED: 'input_received',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  SKIPPED: 'skipped',
} as const;
export type TaskEventType = (typeof TaskEventType)[keyof typeof TaskEventType];

/** The events that end a task: the last of its log. */
export const ENDING_EVENTS: ReadonlySet<TaskEventType> = new Set([
  TaskEventType.COMPLETED,
  TaskEventType.FAILED,
  TaskEventType.CANCELLED,
  TaskEventType.SKIPPED,
]);

/** What each kind of event carries beyond its seq, task, type and time. */
export interface TaskEventData {
  created: { agentId: string; operation: string; compositionId?: string };
  started: { attempt: number };
  attempt_failed: { attempt: number; error: { code: string; message: string } };
  accepted: { attempt: number };
  progress: { message?: string; progress?: number };
  input_required: { requestId: string; message: string; inputSchema?: Record<string, unknown>; url?: string };
  input_received: { requestId: string; input: unknown };
  completed: { result: TaskResult; attempts?: number };
  failed: { error: TaskError; attempts?: number };
  cancelled: { attempts?: number };
  skipped: { skipReason: SkipReason };
}

/** An event written as it happens; the created and ending events are drawn from the task itself. */
export type LoggedEvent = {
  [T in Exclude<TaskEventType, EndOrCreation>]: { type: T } & TaskEventData[T];
}[Exclude<TaskEventType, EndOrCreation>];

type EndOrCreation = 'created' | 'completed' | 'failed' | 'cancelled' | 'skipped';

/** One event as the streams and `?format=json` give it. */
export type TaskEvent = {
  [T in TaskEventType]: { seq: number; taskId: string; type: T; at: string } & TaskEventData[T];
}[TaskEventType];

/**
 * The log a task's events go to: its own, or its composition's, one log per workflow, so that one
 * seq orders every event of a composition and a stream of it resumes from any one of them.
 */
export interface TaskRef {
  taskId: string;
  compositionId?: string;
}

export const logIdOf = ({ taskId, compositionId }: TaskRef): string => compositionId ?? taskId;
