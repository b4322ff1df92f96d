// A task's condition (`when`): the value it reads of a parent's result, checked against its JSON
// Schema by the checkCondition local activity (Ajv's generated code cannot run in the workflow). A
// task whose condition is not met ends skipped, and its agent is never called.
import type { ConditionCheck } from './activity-contract';
import { bookkeeping, bookkeepingOptions } from './activity-stubs';
import { fieldOf } from './pending-arguments';
import { describe, type RunningTask } from './running-task';
import {
  SkipReasonCode,
  TaskStatus,
  TaskWait,
  type SkipReason,
  type TaskCondition,
  type TaskOutcome,
} from './task-types';

export const skipped = (skipReason: SkipReason): TaskOutcome => ({ status: TaskStatus.SKIPPED, skipReason });

/**
 * The value the condition reads, or the skipped outcome when the parent's result has no such field.
 * A parent that did not complete (executeOnParentFailure, runIfParentSkipped) gives null, as it
 * does to pending arguments.
 */
export function conditionValue(running: RunningTask, when: TaskCondition): { value: unknown } | TaskOutcome {
  const { taskId, field } = when.source;
  const parent = running.run.tasks[Number(taskId)].outcome;
  if (parent?.status !== TaskStatus.COMPLETED) return { value: null };
  return (
    fieldOf(parent.result ?? {}, field, true) ??
    skipped({
      code: SkipReasonCode.MISSING_FIELD,
      message: `The condition reads field "${field}" of task ${taskId}, whose result has no such field`,
    })
  );
}

/** Step: the value checked against the condition's schema. */
export function checkCondition(running: RunningTask, when: TaskCondition, value: unknown): Promise<ConditionCheck> {
  running.waitFor(TaskWait.CONDITION_CHECK);
  return bookkeeping.checkCondition.executeWithOptions(
    { ...bookkeepingOptions, summary: `check condition: ${describe(running)}` },
    [{ taskId: running.task.taskId, schema: when.schema, value }],
  );
}

/** The skipped outcome of a value that fails the schema; undefined when it matches. */
export function outcomeOfCheck(when: TaskCondition, check: ConditionCheck): TaskOutcome | undefined {
  if (check.matches) return undefined;
  const { taskId, field } = when.source;
  return skipped({
    code: SkipReasonCode.CONDITION_NOT_MET,
    message: `Field "${field}" of task ${taskId} does not match the condition: ${check.summary}`,
    details: check.problems,
  });
}
