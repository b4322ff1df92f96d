import { WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { PrincipalKind, type Principal } from '../auth/principal';
import { ApiError, ErrorCode, forbidden, notFound } from '../http/errors';
import { workflowIdOf, type TaskDocument, type TaskIndex } from './task-index';
import type { TemporalHandle } from './temporal-client';
import { cancelTaskUpdate, TaskStatus } from './task-types';

/** Deepest delegation chain followed when cancelling a tree: a guard against a cycle in stored data. */
const MAX_DELEGATION_DEPTH = 100;

const alreadyEnded = (taskId: string, status: string) => new ApiError(ErrorCode.CONFLICT, `Task ${taskId} already ended: ${status}`);

/**
 * `POST /tasks/{taskId}/cancel` by the task's creator or an admin. The workflow cancels and records
 * (its dependants then fail with DEPENDENCY_FAILED); the tasks delegated from it, down the whole
 * tree, are cancelled after it, each by its own workflow.
 */
export async function cancelTask(index: TaskIndex, temporal: TemporalHandle, principal: Principal, taskId: string): Promise<{ taskId: string; status: string }> {
  const task = await index.find(taskId);
  if (!task) throw notFound(`Task ${taskId}`);
  const isCreator = principal.kind === task.createdBy.kind && principal.id === task.createdBy.id;
  if (!isCreator && principal.kind !== PrincipalKind.ADMIN) throw forbidden('Only the task creator or an admin may cancel this task');
  if (task.status !== TaskStatus.PENDING) throw alreadyEnded(taskId, task.status);

  const status = await cancelInWorkflow(index, temporal, task);
  if (status !== TaskStatus.CANCELLED) throw alreadyEnded(taskId, status);
  await cancelDelegatedTree(index, temporal, taskId);
  return { taskId, status };
}

/** The status the task has after the workflow handled the cancellation. */
async function cancelInWorkflow(index: TaskIndex, temporal: TemporalHandle, task: TaskDocument): Promise<string> {
  try {
    return await temporal.client.workflow.getHandle(workflowIdOf(task)).executeUpdate(cancelTaskUpdate, { args: [task._id] });
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError) && !(error instanceof WorkflowUpdateFailedError)) throw error;
    // The run ended between our read and the update: the index says how.
    return (await index.find(task._id))?.status ?? TaskStatus.CANCELLED;
  }
}

async function cancelDelegatedTree(index: TaskIndex, temporal: TemporalHandle, rootTaskId: string): Promise<void> {
  let parents = [rootTaskId];
  for (let depth = 0; parents.length > 0 && depth < MAX_DELEGATION_DEPTH; depth += 1) {
    const delegated = await index.findDelegated(parents);
    // Ended tasks are passed through: their own delegates may still run.
    await Promise.all(delegated.filter((task) => task.status === TaskStatus.PENDING).map((task) => cancelInWorkflow(index, temporal, task)));
    parents = delegated.map((task) => task._id);
  }
}
