import { PrincipalKind, samePrincipal, type Principal } from '../auth/principal';
import type { StoredComposition, TaskDocument } from './task-store';

/** The creator, the executing agent and admins may read a task. */
export function canReadTask(principal: Principal, task: Pick<TaskDocument, 'createdBy' | 'agentId'>): boolean {
  return (
    principal.kind === PrincipalKind.ADMIN ||
    samePrincipal(principal, task.createdBy) ||
    (principal.kind === PrincipalKind.AGENT && principal.id === task.agentId)
  );
}

/** The creator, admins, and the agent of any of its tasks may read a composition. */
export function canReadComposition(principal: Principal, composition: StoredComposition): boolean {
  return (
    samePrincipal(principal, composition.createdBy) || composition.tasks.some((task) => canReadTask(principal, task))
  );
}
