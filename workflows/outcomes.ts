// How an agent's answer, its report or a failed activity becomes a task's outcome. Pure functions.
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import type { AgentAnswer } from './activity-contract';
import { TaskErrorCode, TaskStatus, type AgentReport, type TaskError, type TaskOutcome } from './task-types';

export const failure = (error: TaskError, attempts?: number): TaskOutcome => ({
  status: TaskStatus.FAILED,
  error,
  ...(attempts === undefined ? {} : { attempts }),
});

const STATUS_OF_ANSWER = {
  completed: TaskStatus.COMPLETED,
  failed: TaskStatus.FAILED,
  cancelled: TaskStatus.CANCELLED,
} as const;

/** Without result or error when the call left them in the task store only (CallAgentResult). */
export const outcomeOfAnswer = (answer: AgentAnswer): TaskOutcome => ({
  status: STATUS_OF_ANSWER[answer.kind],
  ...(answer.kind === 'completed' && answer.result !== undefined ? { result: answer.result } : {}),
  ...(answer.kind === 'failed' && answer.error !== undefined ? { error: answer.error } : {}),
  ...(answer.attempt > 0 ? { attempts: answer.attempt } : {}),
});

export function outcomeOfReport(report: AgentReport, attempts?: number): TaskOutcome {
  return report.status === TaskStatus.COMPLETED
    ? { status: TaskStatus.COMPLETED, result: report.result ?? {}, ...(attempts === undefined ? {} : { attempts }) }
    : failure(report.error ?? { message: 'Agent reported failure' }, attempts);
}

/**
 * The task error for a failed activity, local (its failure arrives as thrown, or wrapped in an
 * ActivityFailure) or regular (always wrapped): a non-retryable failure carries its code as type and
 * the detail as first detail; a retryable one or a timeout, once the retries are used up, means the
 * agent was unreachable. Anything else is not the activity's failure and is thrown again.
 */
export function activityError(error: unknown): TaskError {
  const cause = error instanceof ActivityFailure && error.cause ? error.cause : error;
  if (cause instanceof ApplicationFailure && cause.nonRetryable && cause.type) {
    return {
      code: cause.type,
      message: cause.message,
      ...(cause.details?.length ? { details: cause.details[0] } : {}),
    };
  }
  if (!(cause instanceof ApplicationFailure || cause instanceof TimeoutFailure)) throw error;
  return { code: TaskErrorCode.AGENT_UNREACHABLE, message: `Agent unreachable after its retries: ${cause.message}` };
}
