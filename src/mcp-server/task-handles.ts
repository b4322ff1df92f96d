import type { CallToolResult, Task, TaskStatus as McpTaskStatus } from '@modelcontextprotocol/sdk/types.js';
import { inputRequestOf, type TaskDocument } from '../tasks/task-document';
import { toTaskView } from '../tasks/task-views';
import { TaskStatus, type TaskError } from '../../workflows/task-types';
import { cancelledCall, completedCall, errorText, failedCall, skippedCall } from './call-results';

/**
 * The `pollInterval` MCP tasks suggest, in ms: a task's status is a read of the store, and a
 * client waiting for the end does better with `tasks/result`, which answers as the task ends.
 */
export const TASK_POLL_INTERVAL_MS = 1_000;

/** The `_meta` key MCP uses to tie a message to its task. */
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';

const MCP_STATUS: Record<TaskStatus, McpTaskStatus> = {
  [TaskStatus.PENDING]: 'working',
  [TaskStatus.INPUT_REQUIRED]: 'input_required',
  [TaskStatus.COMPLETED]: 'completed',
  [TaskStatus.FAILED]: 'failed',
  [TaskStatus.CANCELLED]: 'cancelled',
  // MCP has no state for a task not run: like a cancelled one, it ended before completion without a result.
  [TaskStatus.SKIPPED]: 'cancelled',
};

/**
 * A task of the service as an MCP task: the same id and times. `ttl` is null (unlimited): the
 * service keeps its tasks, whatever ttl a client asks for. `statusMessage` is the agent's last
 * progress message while it works, its question while it waits for input, the error once it failed.
 */
export function mcpTaskOf(task: TaskDocument): Task {
  const statusMessage = statusMessageOf(task);
  return {
    taskId: task._id,
    status: MCP_STATUS[task.status],
    ...(statusMessage === undefined ? {} : { statusMessage }),
    createdAt: task.createdAt.toISOString(),
    lastUpdatedAt: task.updatedAt.toISOString(),
    ttl: null,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}

function statusMessageOf(task: TaskDocument): string | undefined {
  switch (task.status) {
    case TaskStatus.PENDING:
      return task.message;
    case TaskStatus.INPUT_REQUIRED:
      return inputRequestOf(task)?.message;
    case TaskStatus.FAILED:
      return errorText(errorOf(task));
    case TaskStatus.SKIPPED:
      return toTaskView(task).skipReason?.message;
    default:
      return undefined;
  }
}

/** What the `tools/call` that started an ended task answers, as a plain call would have answered it. */
export function endedCallResult(task: TaskDocument): CallToolResult {
  const view = toTaskView(task);
  if (task.status === TaskStatus.COMPLETED) return completedCall(task._id, view.result ?? {});
  if (task.status === TaskStatus.FAILED) return failedCall(task._id, errorOf(task));
  if (task.status === TaskStatus.SKIPPED) return skippedCall(task._id, view.skipReason);
  return cancelledCall(task._id);
}

/** A failed task's error; a task failed without one says only that. */
const errorOf = (task: TaskDocument): TaskError => toTaskView(task).error ?? `Task ${task._id} failed`;
