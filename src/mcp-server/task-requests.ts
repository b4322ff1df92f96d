import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CancelTaskRequestSchema,
  ErrorCode as McpErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  McpError,
  type CallToolResult,
  type CreateTaskResult,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/principal';
import { ApiError, ErrorCode } from '../http/errors';
import { canReadTask } from '../tasks/task-access';
import { cancelTask, type TaskCancellationDeps } from '../tasks/task-cancellation';
import { inputRequestOf, type TaskDocument } from '../tasks/task-document';
import { isLive, TaskStatus } from '../../workflows/task-types';
import type { McpTaskPosition, McpTaskRecords } from './mcp-task-records';
import type { McpSession } from './server-sessions';
import { endedCallResult, mcpTaskOf, RELATED_TASK } from './task-handles';
import { followTask, launchToolTask, type ToolCallDeps } from './tool-calls';
import type { CatalogTool } from './tool-catalog';

/** What MCP's tasks read: the tasks of `/mcp`, their logs, and the cancellation of `POST /tasks/{taskId}/cancel`. */
export interface McpTaskDeps extends Pick<ToolCallDeps, 'launcher' | 'feeds'> {
  mcpTasks: Pick<McpTaskRecords, 'record' | 'listReadable'>;
  cancellation: TaskCancellationDeps;
}

/** Tasks one `tasks/list` page holds. */
const TASKS_PAGE = 50;

/**
 * A task-augmented `tools/call`: the task starts as for a plain call, and the client gets its handle
 * at once, to follow with `tasks/*`. Arguments the tool refuses start nothing: a JSON-RPC error
 * (-32602), since a task-augmented call answers a task or an error.
 */
export async function startCallTask(
  deps: McpTaskDeps,
  named: CatalogTool,
  args: Record<string, unknown>,
  principal: Principal,
): Promise<CreateTaskResult> {
  const launched = await launchToolTask(deps, named, args, principal, (taskId) =>
    deps.mcpTasks.record(principal, taskId, named.agentId),
  );
  if ('refusal' in launched) {
    const { code, message, details } = launched.refusal;
    throw new McpError(McpErrorCode.InvalidParams, `${code}: ${message}`, details);
  }
  const { taskId } = launched;
  const task = await deps.cancellation.taskStore.find(taskId);
  if (!task) throw new McpError(McpErrorCode.InternalError, `Task ${taskId} was started but cannot be read`);
  return { task: mcpTaskOf(task) };
}

/**
 * MCP's `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` on `server`, for `principal`:
 * on the tasks it may read (as `GET /tasks/{taskId}`), whichever session or process started them;
 * `tasks/list` pages through its MCP tasks, those task-augmented calls started.
 */
export function serveTaskRequests(
  server: Server,
  deps: McpTaskDeps,
  principal: Principal,
  session: McpSession | undefined,
): void {
  server.setRequestHandler(GetTaskRequestSchema, async (request) =>
    mcpTaskOf(await readableTask(deps, principal, request.params.taskId)),
  );

  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const task = await readableTask(deps, principal, request.params.taskId);
    const related = { [RELATED_TASK]: { taskId: task._id } };
    const result: CallToolResult = isLive(task.status)
      ? await followTask(
          deps,
          task._id,
          {
            principal,
            session,
            requestId: extra.requestId,
            progressToken: undefined,
            signal: extra.signal,
            notify: (notification) => extra.sendNotification(notification),
            ask: (elicitation) =>
              server.transport!.send(relatedTo(elicitation, related), { relatedRequestId: extra.requestId }),
            // Its stream carries no event ids: a client that lost it asks tasks/result again.
            at: () => undefined,
            untilEnded: true,
          },
          {
            after: task.eventSeq ?? 0,
            input: task.status === TaskStatus.INPUT_REQUIRED ? inputRequestOf(task) : undefined,
          },
        )
      : endedCallResult(task);
    return { ...result, _meta: { ...result._meta, ...related } };
  });

  server.setRequestHandler(ListTasksRequestSchema, async (request) => {
    const cursor = request.params?.cursor;
    const after = cursor === undefined ? undefined : positionOf(cursor);
    const page = await deps.mcpTasks.listReadable(principal, { after, limit: TASKS_PAGE });
    const tasks = await Promise.all(page.map(({ taskId }) => deps.cancellation.taskStore.find(taskId)));
    const readable = tasks.filter((task): task is TaskDocument => task !== null && canReadTask(principal, task));
    return {
      tasks: readable.map(mcpTaskOf),
      ...(page.length === TASKS_PAGE ? { nextCursor: cursorOf(page[page.length - 1]) } : {}),
    };
  });

  server.setRequestHandler(CancelTaskRequestSchema, async (request) => {
    const task = await readableTask(deps, principal, request.params.taskId);
    if (!isLive(task.status))
      throw new McpError(
        McpErrorCode.InvalidParams,
        `Cannot cancel task: already in terminal status '${mcpTaskOf(task).status}'`,
      );
    try {
      await cancelTask(deps.cancellation, principal, task._id);
    } catch (error) {
      if (error instanceof ApiError && error.code !== ErrorCode.INTERNAL)
        throw new McpError(McpErrorCode.InvalidParams, `Cannot cancel task: ${error.message}`, error.details);
      throw error;
    }
    return mcpTaskOf((await deps.cancellation.taskStore.find(task._id)) ?? task);
  });
}

/**
 * Task `taskId` when `principal` may read it, however it was started (a task-augmented call, a plain
 * one whose result named it, `POST /tasks`); else MCP's error for an unknown task (-32602), the same
 * either way, as `GET /tasks/{taskId}` answers 404 for both.
 */
async function readableTask(deps: McpTaskDeps, principal: Principal, taskId: string): Promise<TaskDocument> {
  const task = await deps.cancellation.taskStore.find(taskId);
  if (!task || !canReadTask(principal, task))
    throw new McpError(McpErrorCode.InvalidParams, `Failed to retrieve task: Task ${taskId} not found`);
  return task;
}

/** An elicitation for a task, tied to it as MCP asks (`_meta`'s related task). */
function relatedTo(request: JSONRPCRequest, related: Record<string, unknown>): JSONRPCRequest {
  return { ...request, params: { ...request.params, _meta: { ...request.params?._meta, ...related } } };
}

/** A `tasks/list` cursor: where the page ended, opaque to the client. */
const cursorOf = ({ createdAt, taskId }: McpTaskPosition) =>
  Buffer.from(JSON.stringify([createdAt.getTime(), taskId])).toString('base64url');

function positionOf(cursor: string): McpTaskPosition {
  try {
    const [at, taskId] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    if (typeof at === 'number' && typeof taskId === 'string') return { createdAt: new Date(at), taskId };
  } catch {
    // Not a cursor of ours: refused below.
  }
  throw new McpError(McpErrorCode.InvalidParams, 'Invalid tasks/list cursor');
}
