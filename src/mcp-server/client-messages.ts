import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/principal';
import { ApiError, ErrorCode } from '../http/errors';
import type { Logger } from '../ops/logger';
import { cancelTask, type TaskCancellationDeps } from '../tasks/task-cancellation';
import { inputRequestOf } from '../tasks/task-document';
import { answerInput, type TaskInputDeps } from '../tasks/task-inputs';
import { recordedCall } from './overtaken-calls';
import type { McpSession, McpSessions } from './server-sessions';

export interface ClientMessageDeps {
  inputs: TaskInputDeps;
  cancellation: TaskCancellationDeps;
  sessions: Pick<McpSessions, 'callOf'>;
  logger: Logger;
}

const ELICITATION_ID = /^acs-input\/([^/]+)\/([^/]+)$/;

/**
 * The client messages the service acts on itself rather than through a protocol session, since
 * they may reach any API process: the answer to an elicitation for a task's input (elicitationIdOf),
 * which becomes the task's input as `POST /tasks/{taskId}/input` would make it, and
 * `notifications/cancelled` of a `tools/call`, which cancels its task. False for any other message.
 */
export async function handledByService(
  deps: ClientMessageDeps,
  principal: Principal,
  session: McpSession | undefined,
  message: JSONRPCMessage,
): Promise<boolean> {
  if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
    const named = typeof message.id === 'string' ? ELICITATION_ID.exec(message.id) : null;
    if (!named) return false;
    const action = isJSONRPCResultResponse(message) ? (message.result as { action?: unknown }).action : 'cancel';
    const content = isJSONRPCResultResponse(message) ? (message.result as { content?: unknown }).content : undefined;
    await settle(deps, () => answered(deps, principal, named[1], named[2], action, content));
    return true;
  }
  if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
    const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
    if (session && (typeof requestId === 'string' || typeof requestId === 'number')) {
      const made = await deps.sessions.callOf(session.sessionId, requestId);
      if (made) await settle(deps, () => cancelTask(deps.cancellation, principal, made.taskId));
      else void cancelWhenStarted(deps, principal, session.sessionId, requestId);
    }
    return true;
  }
  return false;
}

/** Cancels the task of call `requestId` once its record is there (recordedCall); the client awaits no reply. */
async function cancelWhenStarted(
  deps: ClientMessageDeps,
  principal: Principal,
  sessionId: string,
  requestId: string | number,
): Promise<void> {
  try {
    const made = await recordedCall(deps.sessions, sessionId, requestId);
    if (made) await settle(deps, () => cancelTask(deps.cancellation, principal, made.taskId));
  } catch (error) {
    deps.logger.warn({ err: error, requestId }, 'an MCP cancellation that overtook its call failed');
  }
}

/**
 * A person's answer, through the client, to input request `requestId` of task `taskId`. Accepted:
 * the form's content is the input (for a page to open, `{action: "accept"}`, as over HTTP). A page
 * declined is that answer too; a form declined or cancelled cancels the task, whose agent waits for
 * an input no one will give.
 */
async function answered(
  deps: ClientMessageDeps,
  principal: Principal,
  taskId: string,
  requestId: string,
  action: unknown,
  content: unknown,
): Promise<unknown> {
  const task = await deps.inputs.taskStore.find(taskId);
  const asksToOpenPage = task !== null && inputRequestOf(task)?.url !== undefined;
  if (asksToOpenPage)
    return answerInput(deps.inputs, principal, taskId, {
      input: { action: action === 'accept' ? 'accept' : 'decline' },
      requestId,
    });
  if (action === 'accept') return answerInput(deps.inputs, principal, taskId, { input: content ?? {}, requestId });
  return cancelTask(deps.cancellation, principal, taskId);
}

/** Runs the act; a refusal (an answer too late, a task that ended) is logged, since the client awaits no reply. */
async function settle(deps: ClientMessageDeps, act: () => Promise<unknown>): Promise<void> {
  try {
    await act();
  } catch (error) {
    if (!(error instanceof ApiError) || error.code === ErrorCode.INTERNAL) throw error;
    deps.logger.info({ code: error.code, message: error.message }, 'an MCP client message changed nothing');
  }
}
