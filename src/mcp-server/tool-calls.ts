import {
  ErrorCode as McpErrorCode,
  McpError,
  type CallToolResult,
  type JSONRPCRequest,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/principal';
import { ApiError, ErrorCode } from '../http/errors';
import type { TaskEventFeeds } from '../task-events/event-feeds';
import { TaskEventType, type TaskEvent } from '../task-events/task-event';
import type { InputRequest } from '../tasks/task-document';
import type { TaskLauncher } from '../tasks/task-launcher';
import { cancelledCall, completedCall, failedCall, refusedCall, skippedCall } from './call-results';
import type { McpSession, McpSessions } from './server-sessions';
import type { CatalogTool } from './tool-catalog';

export interface ToolCallDeps {
  launcher: Pick<TaskLauncher, 'launchTask'>;
  feeds: Pick<TaskEventFeeds, 'subscribe'>;
  sessions: Pick<McpSessions, 'recordCall'>;
}

/** What the call has of its request and its answer stream. */
export interface CallContext {
  principal: Principal;
  session: McpSession | undefined;
  requestId: string | number;
  progressToken: string | number | undefined;
  /** Aborts when the client is gone: the task goes on, the answer has no one to go to. */
  signal: AbortSignal;
  notify(notification: ServerNotification): Promise<void>;
  /** Sends a request to the client on the call's stream; its answer comes as a POST of its own (client-messages.ts). */
  ask(request: JSONRPCRequest): Promise<void>;
  /** Told the seq of the task's event each message that follows answers, for the stream's event ids (call-event-ids.ts). */
  at(seq: number): void;
  /**
   * Waits for the task's end even while it asks for input a client without elicitation cannot give
   * (`tasks/result`, which MCP has block until the end): the input then comes through `POST /tasks/{taskId}/input`.
   */
  untilEnded?: boolean;
}

/** Refusals that are the arguments' or the tool's: told to the model as a tool error, for it to try again. */
const TOOL_ERRORS: ReadonlySet<string> = new Set([ErrorCode.VALIDATION_ERROR, ErrorCode.OPERATION_NOT_SUPPORTED]);

/** The id of the elicitation request for input request `requestId` of task `taskId`: its answer names both. */
export const elicitationIdOf = (taskId: string, requestId: string) => `acs-input/${taskId}/${requestId}`;

/**
 * A `tools/call`: the task `POST /tasks` would start (the same checks, retries, timeouts, events and
 * callbacks), followed through its event log until it ends, and answered with its result. Its
 * progress goes to the client as `notifications/progress`; its input requests as elicitations, when
 * the client declared them.
 */
export async function callTool(
  deps: ToolCallDeps,
  named: CatalogTool,
  args: Record<string, unknown>,
  call: CallContext,
): Promise<CallToolResult> {
  const launched = await launchToolTask(deps, named, args, call.principal);
  if ('refusal' in launched) return refusedCall(launched.refusal);
  const { session } = call;
  // One without a session can have neither `notifications/cancelled` nor a resumed stream.
  if (!session) return followTask(deps, launched.taskId, call);
  // A call in a session is kept for both, written while the task runs: its stream's messages carry
  // event ids a client resumes with, and none goes out before the record resumption reads.
  const kept = deps.sessions.recordCall(session.sessionId, call.requestId, {
    taskId: launched.taskId,
    ...(call.progressToken === undefined ? {} : { progressToken: call.progressToken }),
  });
  const answer = await followTask(deps, launched.taskId, call, { ready: kept });
  await kept;
  return answer;
}

/**
 * Starts the tool's task as `POST /tasks` would: its taskId, or the refusal of arguments or a tool
 * the agent does not take, for the model to read. `keep` writes what the caller keeps of the task
 * before it hears of it (an MCP task's record): one write, after the launch.
 */
export async function launchToolTask(
  deps: Pick<ToolCallDeps, 'launcher'>,
  { name, agentId, tool }: CatalogTool,
  args: Record<string, unknown>,
  principal: Principal,
  keep?: (taskId: string) => Promise<void>,
): Promise<{ taskId: string } | { refusal: ApiError }> {
  let taskId: string;
  try {
    taskId = await deps.launcher.launchTask(principal, { agentId, operation: `tools/${tool.name}`, params: args });
  } catch (error) {
    if (error instanceof ApiError && TOOL_ERRORS.has(error.code)) return { refusal: error };
    // The agent went after the catalog was read (endpoint.ts: toolNamed): its tool is unknown now.
    if (error instanceof ApiError && error.code === ErrorCode.AGENT_NOT_FOUND)
      throw new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${name}`);
    throw error;
  }
  await keep?.(taskId);
  return { taskId };
}

/**
 * The task's answer once it ends, with its progress and input requests sent on the way: the events
 * after `after` in its log, and `input`, the request it waits on at that point, if any. Nothing is
 * sent before `ready` (the call's record) is; if it fails, the answer is an internal failure.
 */
export function followTask(
  deps: Pick<ToolCallDeps, 'feeds'>,
  taskId: string,
  call: CallContext,
  { after = 0, input, ready = Promise.resolve() }: { after?: number; input?: InputRequest; ready?: Promise<void> } = {},
): Promise<CallToolResult> {
  return new Promise<CallToolResult>((resolve) => {
    let sentProgress = 0;
    let finished = false;
    const finish = (result: CallToolResult) => {
      if (finished) return;
      finished = true;
      unsubscribe();
      call.signal.removeEventListener('abort', gone);
      resolve(result);
    };
    const gone = () =>
      finish(failedCall(taskId, { code: 'CLIENT_GONE', message: 'The client left; the task goes on' }));
    // Callbacks of one promise run in the order they were added: the events keep theirs.
    const whenReady = (work: () => void) => void ready.then(work, () => undefined);
    void ready.catch(() =>
      finish(failedCall(taskId, { code: 'INTERNAL', message: `The call of task ${taskId} was not recorded` })),
    );
    const onEvent = (event: TaskEvent) => {
      call.at(event.seq);
      switch (event.type) {
        case TaskEventType.PROGRESS: {
          if (call.progressToken === undefined) return;
          // MCP's progress only grows: a report that gives none, or less, moves it on a little.
          const given = event.progress === undefined ? 0 : Math.round(event.progress * 10_000) / 100;
          sentProgress = Math.max(given, Math.round((sentProgress + 0.01) * 100) / 100);
          void call
            .notify({
              method: 'notifications/progress',
              params: {
                progressToken: call.progressToken,
                progress: sentProgress,
                total: 100,
                ...(event.message === undefined ? {} : { message: event.message }),
              },
            })
            .catch(() => undefined);
          return;
        }
        case TaskEventType.INPUT_REQUIRED:
          return void askForInput(taskId, event, call, finish);
        case TaskEventType.COMPLETED:
          return finish(completedCall(taskId, event.result));
        case TaskEventType.FAILED:
          return finish(failedCall(taskId, event.error));
        case TaskEventType.CANCELLED:
          return finish(cancelledCall(taskId));
        case TaskEventType.SKIPPED:
          return finish(skippedCall(taskId, event.skipReason));
        default:
      }
    };
    const unsubscribe = deps.feeds.subscribe(
      { kind: 'task', taskId },
      {
        after,
        // A call with no progress to tell and no client to ask for input shows only the task's end.
        waitsForEnd: call.progressToken === undefined && call.session?.capabilities.elicitation === undefined,
        deliver: (events) => whenReady(() => events.forEach(onEvent)),
        missing: () => finish(failedCall(taskId, { code: 'INTERNAL', message: `Task ${taskId} has no event log` })),
        ended: () => undefined,
      },
    );
    call.signal.addEventListener('abort', gone, { once: true });
    if (input) whenReady(() => void askForInput(taskId, input, call, finish));
  });
}

/**
 * An input request of the task, sent to a client that declared elicitation: as a URL request when
 * the task asks a person to open a page and the client takes those, else as a form. A client that
 * declared none is answered at once: the task waits for `POST /tasks/{taskId}/input`.
 */
async function askForInput(
  taskId: string,
  event: InputRequest,
  call: CallContext,
  finish: (result: CallToolResult) => void,
): Promise<void> {
  const elicitation = call.session?.capabilities.elicitation;
  if (elicitation === undefined) {
    if (call.untilEnded) return;
    finish(
      failedCall(taskId, {
        code: 'INPUT_REQUIRED',
        message: `${event.message} (task ${taskId} waits for input: POST /tasks/${taskId}/input answers it)`,
      }),
    );
    return;
  }
  const id = elicitationIdOf(taskId, event.requestId);
  const params =
    event.url !== undefined && elicitation.url !== undefined
      ? { mode: 'url', message: event.message, url: event.url, elicitationId: id }
      : {
          mode: 'form',
          message: event.message,
          requestedSchema: event.inputSchema ?? { type: 'object', properties: {} },
        };
  await call.ask({ jsonrpc: '2.0', id, method: 'elicitation/create', params }).catch(() => undefined);
}
