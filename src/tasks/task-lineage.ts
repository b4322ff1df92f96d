import { samePrincipal, type Principal } from '../auth/principal';
import type { ParentTask } from '../agent-calls/task-lineage';
import { ApiError, ErrorCode, notFound } from '../http/errors';
import type { RecentAgents } from '../registry/recent-agents';
import { TaskStatus } from '../../workflows/task-types';
import { canReadTask } from './task-access';
import type { TaskDocument } from './task-document';
import type { TaskStore } from './task-store';

/** Where a task started on behalf of another sits in their tree, as the task store keeps it. */
export type TaskLineage = Required<Pick<TaskDocument, 'rootTaskId' | 'hops'>> & Pick<TaskDocument, 'parentTaskId'>;

/** The parent a request names: the whole header, or only the id (a room's `parentTaskId`). */
export type NamedParent = ParentTask | Pick<ParentTask, 'taskId'>;

export interface LineageDeps {
  taskStore: TaskStore;
  agents: RecentAgents;
  /** MAX_TASK_DEPTH. */
  maxTaskDepth: number;
}

/** `task` as the parent of the tasks its agent starts: what the calls to its agent name in ACS-Task-Lineage. */
export const parentTaskOf = (task: Pick<TaskDocument, '_id' | 'rootTaskId' | 'hops'>): ParentTask => ({
  taskId: task._id,
  rootTaskId: task.rootTaskId ?? task._id,
  hops: task.hops ?? 0,
});

/**
 * The lineage of a task `principal` starts on behalf of `named`, or the refusal, before anything is
 * written. A parent in this store that the caller may read, or whose agent the caller owns (the
 * agent's server, calling back with its owner's key, got the header with the call), is the parent
 * on record: its own lineage counts, cancelling it cancels the new task, and a cancelled one starts
 * nothing more. Any other parent (another service's task, or one the caller has no business with)
 * is not linked to: the header's count goes on, so a loop through it still ends, and nothing of the
 * stored task shows, so the answer is the same whether it exists or not. A forged header then only
 * ever makes the forger's own tasks count deeper. Deeper than MAX_TASK_DEPTH is `422
 * TASK_DEPTH_EXCEEDED`.
 */
export async function lineageUnder(
  { taskStore, agents, maxTaskDepth }: LineageDeps,
  principal: Principal,
  named: NamedParent,
): Promise<TaskLineage> {
  const stored = await taskStore.find(named.taskId);
  const parent = stored && (await isKnownTo(agents, principal, stored)) ? stored : undefined;
  if (parent?.status === TaskStatus.CANCELLED)
    throw new ApiError(ErrorCode.CONFLICT, `Task ${parent._id} was cancelled: no task starts on its behalf`);
  if (!parent && !('hops' in named)) throw notFound(`Task ${named.taskId}`);
  const above = parent ? parentTaskOf(parent) : (named as ParentTask);
  const lineage = {
    ...(parent ? { parentTaskId: parent._id } : {}),
    rootTaskId: above.rootTaskId,
    hops: above.hops + 1,
  };
  if (lineage.hops > maxTaskDepth) {
    throw new ApiError(
      ErrorCode.TASK_DEPTH_EXCEEDED,
      `A task started on behalf of task ${named.taskId} would be ${lineage.hops} hops below its root task ${lineage.rootTaskId}: at most ${maxTaskDepth} (MAX_TASK_DEPTH). An agent that calls itself, directly or through others, stops here`,
      { parentTaskId: named.taskId, rootTaskId: lineage.rootTaskId, hops: lineage.hops, maxTaskDepth },
    );
  }
  return lineage;
}

/** Whether `principal` may name `task` as a parent on record: it reads the task, or owns the task's agent. */
async function isKnownTo(agents: RecentAgents, principal: Principal, task: TaskDocument): Promise<boolean> {
  if (canReadTask(principal, task)) return true;
  const owner = (await agents.findById(task.agentId))?.owner;
  return owner !== undefined && samePrincipal(principal, owner);
}
