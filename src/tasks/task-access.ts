import { PrincipalKind, samePrincipal, type Principal } from '../auth/principal';
import { notFound } from '../http/errors';
import type { StoredComposition, TaskDocument } from './task-document';

/** Admins and the agent itself may read every task of an agent; others only the tasks they created. */
export function readsEveryTaskOf(principal: Principal, agentId: string): boolean {
  return principal.kind === PrincipalKind.ADMIN || (principal.kind === PrincipalKind.AGENT && principal.id === agentId);
}

/** The creator, the executing agent and admins may read a task. */
export function canReadTask(principal: Principal, task: Pick<TaskDocument, 'createdBy' | 'agentId'>): boolean {
  return readsEveryTaskOf(principal, task.agentId) || samePrincipal(principal, task.createdBy);
}

/**
 * `task` when `principal` may read it; else 404, as for an unknown id: a 403 would tell that the id
 * exists, and one who may read it (its agent, its creator) learns nothing from a refusal here.
 */
export function readableTask(principal: Principal, task: TaskDocument | null, taskId: string): TaskDocument {
  if (!task || !canReadTask(principal, task)) throw notFound(`Task ${taskId}`);
  return task;
}

/** The creator, admins, and the agent of any of its tasks may read a composition. */
export function canReadComposition(principal: Principal, composition: StoredComposition): boolean {
  return (
    samePrincipal(principal, composition.createdBy) || composition.tasks.some((task) => canReadTask(principal, task))
  );
}
