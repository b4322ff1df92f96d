import { WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { ADMIN_PRINCIPAL } from '../auth/principal';
import { ApiError } from '../http/errors';
import { cancelTask } from './task-cancellation';
import type { TaskDocument } from './task-document';
import type { TaskClaims } from './task-claims';
import type { TaskStore } from './task-store';
import type { TemporalHandle } from './temporal-client';
import { TaskStatus } from '../../workflows/task-types';

/** No outcome claimed before: every cancellation is the first. */
const claims = { claimOutcome: async () => null } as unknown as TaskClaims;

/** A Temporal client whose cancelTask updates `answer` decides, by workflow and task. */
function temporalAnswering(answer: (workflowId: string, taskId: string) => TaskStatus): TemporalHandle {
  return {
    client: {
      withDeadline: (_deadline: number, call: () => Promise<unknown>) => call(),
      workflow: {
        getHandle: (workflowId: string) => ({
          executeUpdate: async (_update: unknown, { args: [taskId] }: { args: [string] }) => answer(workflowId, taskId),
        }),
      },
    },
  } as unknown as TemporalHandle;
}

/**
 * A delegation tree in memory: root → [stuck, sibling], stuck → [grandchild]. The workflow of
 * `stuck` answers no cancellation while `stuckWorkflow.answers` is false, as when no worker runs it.
 */
function delegationTree() {
  const tasks = new Map<string, TaskDocument>();
  const add = (_id: string, parentTaskId?: string) =>
    tasks.set(_id, {
      _id,
      status: TaskStatus.PENDING,
      createdBy: ADMIN_PRINCIPAL,
      ...(parentTaskId ? { parentTaskId } : {}),
    } as TaskDocument);
  add('root');
  add('stuck', 'root');
  add('sibling', 'root');
  add('grandchild', 'stuck');
  const stuckWorkflow = { answers: false };
  const taskStore = {
    find: async (taskId: string) => tasks.get(taskId) ?? null,
    findDelegated: async (parents: string[]) =>
      [...tasks.values()].filter((task) => parents.includes(task.parentTaskId ?? '')),
  } as unknown as TaskStore;
  const temporal = temporalAnswering((workflowId, taskId) => {
    if (taskId === 'stuck' && !stuckWorkflow.answers)
      throw new WorkflowUpdateRPCTimeoutOrCancelledError(`no worker for ${workflowId}`);
    tasks.get(taskId)!.status = TaskStatus.CANCELLED;
    return TaskStatus.CANCELLED;
  });
  const cancel = () => cancelTask({ taskStore, claims, temporal }, ADMIN_PRINCIPAL, 'root');
  const statuses = () => Object.fromEntries([...tasks.values()].map((task) => [task._id, task.status]));
  return { cancel, statuses, stuckWorkflow };
}

describe('cancelTask down a delegation tree', () => {
  it('cancels the rest of the tree past a delegate it cannot cancel, answers 503, and finishes the tree when sent again', async () => {
    const tree = delegationTree();
    const first = await tree.cancel().catch((error: unknown) => error);
    expect(first).toBeInstanceOf(ApiError);
    expect(first).toMatchObject({
      status: 503,
      code: 'UNAVAILABLE',
      message:
        'Task root is cancelled, but 1 of the tasks delegated from it could not be cancelled yet; send the cancellation again',
    });
    expect(tree.statuses()).toEqual({
      root: 'cancelled',
      stuck: 'pending',
      sibling: 'cancelled',
      grandchild: 'cancelled',
    });

    tree.stuckWorkflow.answers = true;
    await expect(tree.cancel()).resolves.toEqual({ taskId: 'root', status: 'cancelled' });
    expect(tree.statuses()).toEqual({
      root: 'cancelled',
      stuck: 'cancelled',
      sibling: 'cancelled',
      grandchild: 'cancelled',
    });
  });

  it('answers 409 to a cancelled task whose whole tree has ended', async () => {
    const tree = delegationTree();
    tree.stuckWorkflow.answers = true;
    await expect(tree.cancel()).resolves.toEqual({ taskId: 'root', status: 'cancelled' });
    await expect(tree.cancel()).rejects.toMatchObject({
      status: 409,
      code: 'CONFLICT',
      message: 'Task root already ended: cancelled',
    });
  });

  it('cancels a task still pending in the task store whose workflow is gone (terminated, not yet swept)', async () => {
    const task = { _id: 'orphan', status: TaskStatus.PENDING, createdBy: ADMIN_PRINCIPAL } as TaskDocument;
    const taskStore = {
      find: async () => task,
      findDelegated: async () => [],
      updateIfNotEnded: async (_task: unknown, change: { status: TaskStatus }) => {
        if (task.status !== TaskStatus.PENDING) return false;
        task.status = change.status;
        return true;
      },
    } as unknown as TaskStore;
    const temporal = temporalAnswering((workflowId) => {
      throw new WorkflowNotFoundError('workflow execution already completed', workflowId, undefined);
    });
    await expect(cancelTask({ taskStore, claims, temporal }, ADMIN_PRINCIPAL, 'orphan')).resolves.toEqual({
      taskId: 'orphan',
      status: 'cancelled',
    });
    expect(task.status).toBe(TaskStatus.CANCELLED);
  });
});
