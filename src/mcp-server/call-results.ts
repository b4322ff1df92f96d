import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApiError } from '../http/errors';
import type { SkipReason, TaskError, TaskResult } from '../../workflows/task-types';
import { META_TASK } from './tool-catalog';

/** A completed task's result: an object (TaskResult), as `structuredContent` and as its JSON text for clients that read only `content`. */
export function completedCall(taskId: string, result: TaskResult): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(result) }],
    structuredContent: result,
    _meta: { [META_TASK]: taskId },
  };
}

/** A task that failed, was cancelled, or cannot go on: a tool error (`isError`), the error's code and message first. */
export function failedCall(taskId: string, error: TaskError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: errorText(error) }], _meta: { [META_TASK]: taskId } };
}

/** A cancelled task: a tool error too, for no result will come. */
export const cancelledCall = (taskId: string): CallToolResult =>
  failedCall(taskId, { code: 'CANCELLED', message: `Task ${taskId} was cancelled` });

/** A skipped task: a tool error too, for no result will come; its text says why it did not run. */
export const skippedCall = (taskId: string, reason: SkipReason | undefined): CallToolResult =>
  failedCall(taskId, {
    code: 'SKIPPED',
    message: `Task ${taskId} was skipped: ${reason?.message ?? 'no reason recorded'}`,
  });

/** `CODE: message` for the service's errors and agents' of that shape; an agent's other errors as they were sent. */
export function errorText(error: TaskError): string {
  if (typeof error === 'string') return error;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && typeof message === 'string') return `${code}: ${message}`;
  return JSON.stringify(error);
}

/**
 * A call the service refused before any task started (arguments that fail the tool's schema, say):
 * a tool error too, so that a model reads why and may try again (MCP 2025-11-25, "Error Handling").
 */
export function refusedCall(error: ApiError): CallToolResult {
  const details = error.details === undefined ? '' : `\n${JSON.stringify(error.details)}`;
  return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}${details}` }] };
}
