import { TaskStatus, type SkipReason, type TaskError, type TaskResult } from '../../workflows/task-types';
import type { TaskEventDocument } from './event-store';
import { TaskEventType, type TaskEvent } from './task-event';

/*
 * The events of a log as its readers give them: the created event drawn from the task, a stored
 * event from its document, an ending event from its ended task. The writer gives the events it
 * stores in the same form to the feeds of its process (LogChanges).
 */

/**
 * What a log reads of a task it belongs to: the created event and the outcome of the ending one are
 * drawn from it, and a task's own log is counted on it. The task store above (src/tasks/) keeps it.
 */
export interface LoggedTask {
  _id: string;
  compositionId?: string;
  agentId: string;
  operation: string;
  status: TaskStatus;
  /** JSON text of the TaskResult. */
  result?: string;
  /** JSON text of the TaskError. */
  error?: string;
  /** JSON text of the SkipReason. */
  skipReason?: string;
  attempts?: number;
  /** The last seq handed out in the task's own log. */
  eventSeq?: number;
  /** The seq of the event that ended the task: always in a composition's log, in its own when its writer moved it. */
  endSeq?: number;
  createdAt: Date;
  updatedAt: Date;
}

export function createdEvent(task: LoggedTask, seq: number): TaskEvent {
  return {
    seq,
    taskId: task._id,
    type: TaskEventType.CREATED,
    at: task.createdAt.toISOString(),
    agentId: task.agentId,
    operation: task.operation,
    ...(task.compositionId === undefined ? {} : { compositionId: task.compositionId }),
  };
}

export function storedEvent(document: TaskEventDocument): TaskEvent {
  const data = document.data === undefined ? {} : (JSON.parse(document.data) as Record<string, unknown>);
  return {
    ...data,
    seq: document.seq,
    taskId: document.taskId,
    type: document.type,
    at: document.at.toISOString(),
  } as TaskEvent;
}

export function endingEvent(task: LoggedTask, seq: number): TaskEvent | undefined {
  const base = { seq, taskId: task._id, at: task.updatedAt.toISOString() };
  const attempts = task.attempts === undefined ? {} : { attempts: task.attempts };
  switch (task.status) {
    case TaskStatus.COMPLETED:
      return {
        ...base,
        type: TaskEventType.COMPLETED,
        result: JSON.parse(task.result ?? '{}') as TaskResult,
        ...attempts,
      };
    case TaskStatus.FAILED:
      return { ...base, type: TaskEventType.FAILED, error: JSON.parse(task.error ?? 'null') as TaskError, ...attempts };
    case TaskStatus.CANCELLED:
      return { ...base, type: TaskEventType.CANCELLED };
    case TaskStatus.SKIPPED:
      return {
        ...base,
        type: TaskEventType.SKIPPED,
        skipReason: JSON.parse(task.skipReason ?? 'null') as SkipReason,
      };
    default:
      return undefined;
  }
}
