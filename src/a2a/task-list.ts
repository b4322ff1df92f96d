import type { Principal } from '../auth/principal';
import type { Agent } from '../registry/agent';
import { canReadTask, readsEveryTaskOf } from '../tasks/task-access';
import type { TaskStore } from '../tasks/task-store';
import { toTaskView } from '../tasks/task-views';
import { a2aState, a2aTask, statusesOf } from './a2a-task';
import { JsonRpcCode, JsonRpcError } from './json-rpc';
import type { ListTasksParams } from './method-params';

/** Where the next page starts: the last task of this one, as an opaque token. */
interface PageCursor {
  createdAt: Date;
  taskId: string;
}

const tokenOf = ({ createdAt, taskId }: PageCursor): string =>
  Buffer.from(JSON.stringify([createdAt.getTime(), taskId])).toString('base64url');

function cursorOf(token: string): PageCursor {
  try {
    const [millis, taskId] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof millis === 'number' && Number.isInteger(millis) && typeof taskId === 'string')
      return { createdAt: new Date(millis), taskId };
  } catch {
    // Answered below, as any token this endpoint did not give.
  }
  throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, 'pageToken is not one this endpoint gave');
}

/**
 * A2A's ListTasks for one agent: the tasks of the agent the caller may read (all of them for an
 * admin and for the agent itself; else those the caller created), newest first. A context is a
 * task here, so `contextId` names one task. SUBMITTED and WORKING are both pending tasks of ours:
 * a page filtered by one of them holds only its own, and may be shorter than `pageSize`.
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
  const empty = { tasks: [], nextPageToken: '', pageSize, totalSize: 0 };
  if (statuses?.length === 0) return empty;
  if (params.contextId) {
    const task = await taskStore.find(params.contextId);
    const listed =
      task !== null &&
      task.agentId === agent.id &&
      canReadTask(principal, task) &&
      (statuses === undefined || statuses.includes(task.status));
    return listed ? page([toTaskView(task)], '', pageSize, 1, state, params.includeArtifacts) : empty;
  }
  const { tasks, total } = await taskStore.listOfAgent(agent.id, {
    ...(readsEveryTaskOf(principal, agent.id) ? {} : { createdBy: principal }),
    ...(statuses ? { statuses } : {}),
    ...(params.statusTimestampAfter ? { updatedAfter: new Date(params.statusTimestampAfter) } : {}),
    ...(params.pageToken ? { before: cursorOf(params.pageToken) } : {}),
    limit: pageSize,
  });
  const last = tasks.at(-1);
  const next = tasks.length === pageSize && last ? tokenOf({ createdAt: last.createdAt, taskId: last._id }) : '';
  return page(tasks.map(toTaskView), next, pageSize, total, state, params.includeArtifacts);
}

function page(
  views: ReturnType<typeof toTaskView>[],
  nextPageToken: string,
  pageSize: number,
  totalSize: number,
  state: string | undefined,
  includeArtifacts = false,
): Record<string, unknown> {
  const tasks = views
    .filter((view) => state === undefined || a2aState(view) === state)
    .map((view) => {
      const task = a2aTask(view);
      return includeArtifacts ? task : { ...task, artifacts: [] };
    });
  return { tasks, nextPageToken, pageSize, totalSize };
}
