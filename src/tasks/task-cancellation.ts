import { WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { PrincipalKind, samePrincipal, type Principal } from '../auth/principal';
import { ApiError, ErrorCode, forbidden, UnavailableError, UnavailableReason } from '../http/errors';
import { refOf, type TaskDocument } from './task-document';
import { CANCELLATION_CLAIM, type TaskClaims } from './task-claims';
import type { TaskStore } from './task-store';
import { readableTask } from './task-access';
import type { TemporalHandle } from './temporal-client';
import { cancelTaskUpdate, isLive, TaskStatus, workflowIdOf } from '../../workflows/task-types';

/**
 * How long the API waits for the workflow to record a cancellation. Without a worker nothing records
 * it, and the caller gets 503 instead of a request that hangs.
 */
const CANCEL_WAIT_MS = 10_000;

/** Deepest delegation chain followed when cancelling a tree: a guard against a cycle in stored data. */
const MAX_DELEGATION_DEPTH = 100;

/** What a cancellation reads, claims and asks the workflow. */
export interface TaskCancellationDeps {
  taskStore: TaskStore;
  claims: TaskClaims;
  temporal: TemporalHandle;
}

const alreadyEnded = (taskId: string, status: string) =>
  new ApiError(ErrorCode.CONFLICT, `Task ${taskId} already ended: ${status}`);

/**
 * `POST /tasks/{taskId}/cancel` by the task's creator or an admin. The workflow cancels and records
 * (its dependants then fail with DEPENDENCY_FAILED); the tasks delegated from it, down the whole
 * tree, are cancelled after it, each by its own workflow. If some of those could not be cancelled
 * (503), sending the cancellation again finishes the tree: a cancelled task whose tree still has
 * pending tasks is not a 409.
 */
export async function cancelTask(
  deps: TaskCancellationDeps,
  principal: Principal,
  taskId: string,
): Promise<{ taskId: string; status: string }> {
  const { taskStore } = deps;
  const task = readableTask(principal, await taskStore.find(taskId), taskId);
  if (!samePrincipal(principal, task.createdBy) && principal.kind !== PrincipalKind.ADMIN)
    throw forbidden('Only the task creator or an admin may cancel this task');

  if (task.status === TaskStatus.CANCELLED) {
    if ((await cancelDelegatedTree(deps, taskId)) === 0) throw alreadyEnded(taskId, task.status);
    return { taskId, status: task.status };
  }
  if (!isLive(task.status)) throw alreadyEnded(taskId, task.status);
  const status = await cancelInWorkflow(deps, task);
  if (status !== TaskStatus.CANCELLED) throw alreadyEnded(taskId, status);
  await cancelDelegatedTree(deps, taskId);
  return { taskId, status };
}

/** The status the task has after the workflow handled the cancellation, or will have when its agent's report came first. */
async function cancelInWorkflow(
  { taskStore, claims, temporal }: TaskCancellationDeps,
  task: TaskDocument,
): Promise<string> {
  // A cancellation and the agent's report arriving together: the one claimed first is the outcome, the other is 409.
  const reported = await claims.claimOutcome(task._id, CANCELLATION_CLAIM, TaskStatus.CANCELLED);
  if (reported?.status !== undefined) return reported.status;
  try {
    const handle = temporal.client.workflow.getHandle(workflowIdOf(task));
    return await temporal.client.withDeadline(Date.now() + CANCEL_WAIT_MS, () =>
      handle.executeUpdate(cancelTaskUpdate, { args: [task._id] }),
    );
  } catch (error) {
    if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) {
      throw new UnavailableError(
        UnavailableReason.CANCELLATION_PENDING,
        `No worker recorded the cancellation within ${CANCEL_WAIT_MS} ms; send it again`,
      );
    }
    if (!(error instanceof WorkflowNotFoundError) && !(error instanceof WorkflowUpdateFailedError)) throw error;
    // No run to cancel: it ended between our read and the update, and recorded how (the task store says),
    // or it was terminated or failed without recording, which the ended-runs watch would find later.
    if (
      error instanceof WorkflowNotFoundError &&
      (await taskStore.updateIfNotEnded(refOf(task), { status: TaskStatus.CANCELLED }))
    )
      return TaskStatus.CANCELLED;
    return (await taskStore.find(task._id))?.status ?? TaskStatus.CANCELLED;
  }
}

/**
 * Cancels every pending task delegated from `rootTaskId`, down the tree, and returns how many it
 * cancelled. A delegate that could not be cancelled does not stop the others; the caller then gets
 * a 503 saying how many are left.
 */
async function cancelDelegatedTree(deps: TaskCancellationDeps, rootTaskId: string): Promise<number> {
  let parents = [rootTaskId];
  let cancelled = 0;
  const failures: unknown[] = [];
  for (let depth = 0; parents.length > 0 && depth < MAX_DELEGATION_DEPTH; depth += 1) {
    const delegated = await deps.taskStore.findDelegated(parents);
    // Ended tasks are passed through: their own delegates may still run.
    const outcomes = await Promise.allSettled(
      delegated.filter((task) => isLive(task.status)).map((task) => cancelInWorkflow(deps, task)),
    );
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') failures.push(outcome.reason);
      else if (outcome.value === TaskStatus.CANCELLED) cancelled += 1;
    }
    parents = delegated.map((task) => task._id);
  }
  if (failures.length > 0) {
    throw new UnavailableError(
      UnavailableReason.CANCELLATION_PENDING,
      `Task ${rootTaskId} is cancelled, but ${failures.length} of the tasks delegated from it could not be cancelled yet; send the cancellation again`,
      {
        causes: failures.map((failure) => (failure instanceof Error ? failure.message : String(failure))),
      },
    );
  }
  return cancelled;
}
