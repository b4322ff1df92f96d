import type { Principal } from '../auth/principal';
import type { Agent } from '../registry/agent';
import { readsEveryTaskOf } from '../tasks/task-access';
import type { TaskStore } from '../tasks/task-store';
import { a2aState, a2aTask, statusesOf } from './a2a-task';
import { JsonRpcCode, JsonRpcError } from './json-rpc';
import type { ListTasksParams } from './method-params';

/** Where the next page starts: the last task of this one, as an opaque token. */
interface PageCursor {
  updatedAt: Date;
  taskId: string;
}

const tokenOf = ({ updatedAt, taskId }: PageCursor): string =>
  Buffer.from(JSON.stringify([updatedAt.getTime(), taskId])).toString('base64url');

function cursorOf(token: string): PageCursor {
  try {
    const [millis, taskId] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof millis === 'number' && Number.isInteger(millis) && typeof taskId === 'string')
      return { updatedAt: new Date(millis), taskId };
  } catch {
    // Answered below, as any token this endpoint did not give.
  }
  throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, 'pageToken is not one this endpoint gave');
}

/**
 * A2A's ListTasks for one agent: the tasks of the agent the caller may read (all of them for an
 * admin and for the agent itself; else those the caller created), the last updated first, those of one
 * context with `contextId`. SUBMITTED and WORKING are both pending tasks of ours: a page filtered
 * by one of them holds only its own, and may be shorter than `pageSize`.
 */
export async function listTasks(
  taskStore: TaskStore,
  principal: Principal,
  agent: Agent,
  params: ListTasksParams,
): Promise<Record<string, unknown>> {
  const { pageSize } = params;
  const state = params.status === 'TASK_STATE_UNSPECIFIED' ? undefined : params.status;
  const statuses = state === undefined ? undefined : statusesOf(state);
  if (statuses?.length === 0) return { tasks: [], nextPageToken: '', pageSize, totalSize: 0 };
  const { tasks, total } = await taskStore.listOfAgent(agent.id, {
    ...(readsEveryTaskOf(principal, agent.id) ? {} : { createdBy: principal }),
    ...(params.contextId ? { contextId: params.contextId } : {}),
    ...(statuses ? { statuses } : {}),
    // A2A's bound is inclusive, the store's exclusive: a millisecond before it, the precision of both.
    ...(params.statusTimestampAfter ? { updatedAfter: new Date(Date.parse(params.statusTimestampAfter) - 1) } : {}),
    ...(params.pageToken ? { before: cursorOf(params.pageToken) } : {}),
    limit: pageSize,
  });
  const last = tasks.at(-1);
  const next = tasks.length === pageSize && last ? tokenOf({ updatedAt: last.updatedAt, taskId: last._id }) : '';
  const listed = tasks
    .filter((task) => state === undefined || a2aState(task) === state)
    .map((task) => (params.includeArtifacts ? a2aTask(task) : withoutArtifacts(a2aTask(task))));
  return { tasks: listed, nextPageToken: next, pageSize, totalSize: total };
}

/** A task without its `artifacts` member: A2A 1.0 §3.1.4 has it left out, not empty, unless asked for. */
function withoutArtifacts({ artifacts: _artifacts, ...task }: Record<string, unknown>): Record<string, unknown> {
  return task;
}
