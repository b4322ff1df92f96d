// What follows a task's end: its outcome recorded in the task store (unless its call did), then the
// deliveries, each settled whether delivered or given up: the notice to an agent that will not be
// heard (a cancelled task it was to report on, or its own task to cancel), and the completion callbacks.
import type { CallbackTarget } from './activity-contract';
import {
  bookkeeping,
  bookkeepingOptions,
  callbackOptions,
  callbacks,
  notificationOptions,
  notifications,
} from './activity-stubs';
import { describe, recordedTaskOf, type RunningTask } from './running-task';
import { recordedByCall, stopOf } from './task-state';
import type { TaskCallback, TaskOutcome } from './task-types';

/** The outcome in the task store, which `GET /tasks/{taskId}` reads. */
export function recordOutcome(running: RunningTask, outcome: TaskOutcome): Promise<void> {
  return bookkeeping.recordTask.executeWithOptions(
    { ...bookkeepingOptions, summary: `record ${outcome.status}: ${describe(running)}` },
    [recordedTaskOf(running), outcome],
  );
}

/**
 * Started after the record, into the run's deliveries: neither an unreachable agent nor a slow
 * callback receiver delays the outcome.
 */
export function deliverAfterEnd(running: RunningTask, outcome: TaskOutcome): void {
  const { task, run } = running;
  const stop = stopOf(running.agent, outcome.status);
  if (stop) {
    run.deliveries.push(
      notifications.notifyCancellation
        .executeWithOptions({ ...notificationOptions, summary: `tell of cancellation: ${describe(running)}` }, [
          { taskId: task.taskId, agentId: task.agentId, ...stop },
        ])
        .catch(() => undefined),
    );
  }
  run.deliveries.push(
    ...deliverCallbacks(
      running,
      outcome,
      recordedByCall(running.agent) && outcome.result === undefined && outcome.error === undefined,
    ),
  );
}

/**
 * The task's and its agent's completion callbacks. `outcomeInStore`: the call left the result or
 * error in the task store only, where the activity reads it.
 */
function deliverCallbacks(running: RunningTask, outcome: TaskOutcome, outcomeInStore: boolean): Array<Promise<void>> {
  const { task } = running;
  const callback: TaskCallback = {
    taskId: task.taskId,
    status: outcome.status,
    ...(outcome.result === undefined ? {} : { result: outcome.result }),
    ...(outcome.error === undefined ? {} : { error: outcome.error }),
    ...(outcome.skipReason === undefined ? {} : { skipReason: outcome.skipReason }),
    agentId: task.agentId,
    operation: task.operation,
    completedAt: new Date().toISOString(),
  };
  const targets: CallbackTarget[] = [
    ...(task.callbackUrl === undefined ? [] : [{ kind: 'task' as const, url: task.callbackUrl }]),
    ...(task.notifyAgent ? [{ kind: 'agent' as const, agentId: task.agentId }] : []),
  ];
  return targets.map((target) =>
    callbacks.deliverCallback
      .executeWithOptions(
        { ...callbackOptions, summary: `callback to ${target.kind}: ${describe(running)}` },
        outcomeInStore ? [target, callback, true] : [target, callback],
      )
      .catch(() => undefined),
  );
}
