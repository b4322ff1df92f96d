import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode as JsonRpcError,
  GetPromptResultSchema,
  McpError,
  ReadResourceResultSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { AgentReplyVerdict } from './agent-reply';
import { rejectedByJsonRpc, verdictOfRefusedStatus } from './agent-reply';
import { serverAnswerOf } from './mcp-answers';
import { afterUrlElicitations } from './mcp-url-required';
import { causeOf } from '../ops/describe-error';
import { REPLY_TOO_LARGE, ReplyTooLarge } from './guarded-fetch';
import { McpSession, type McpSessionOptions } from './mcp-session';
import type { McpSessionPool } from './mcp-session-pool';
import type { AgentEndpoint } from './agent-endpoint';
import { normaliseResult, TaskErrorCode, type McpTaskHandle } from '../../workflows/task-types';

/** What one MCP call means for its task: the verdicts of a signed POST, or a task the server runs on its side. */
export type McpCallVerdict =
  Exclude<AgentReplyVerdict, { kind: 'accepted' }> | { kind: 'mcpTask'; handle: McpTaskHandle };

/** An MCP progress notification, as the task's `progress` (0 to 1, when the server gives a total) and `message`. */
export interface McpProgress {
  progress?: number;
  message?: string;
}

/** JSON-RPC errors that say the request itself is wrong: another attempt would get the same answer. */
const FINAL_JSON_RPC_ERRORS = new Set<number>([
  JsonRpcError.ParseError,
  JsonRpcError.InvalidRequest,
  JsonRpcError.MethodNotFound,
  JsonRpcError.InvalidParams,
]);

/**
 * The capability an operation names, as the registry holds it: a tool, a resource (by its name or
 * URI) or a prompt.
 */
export interface McpOperation {
  category: string;
  entry: { name: string; uri?: string; execution?: { taskSupport?: unknown } };
}

/** Whether a tool asks to run as an MCP task (`execution.taskSupport`), which the workflow then polls. */
function runsAsMcpTask(entry: McpOperation['entry']): boolean {
  const taskSupport = entry.execution?.taskSupport;
  return taskSupport === 'required' || taskSupport === 'optional';
}

export interface McpCallOptions extends McpSessionOptions {
  onProgress: (progress: McpProgress) => void;
  /** The worker's kept sessions: plain calls go on in their agent's (none: a session per call). */
  sessions?: McpSessionPool;
}

/**
 * One call of an operation on an MCP agent: `tools/<name>` is `tools/call`, `resources/<name or uri>`
 * `resources/read`, `prompts/<name>` `prompts/get`. Network trouble and the outbound guard's refusal
 * are thrown, as for a signed POST; everything the server answered is a verdict. A plain call goes
 * on in the agent's kept session when there is a pool; a tool that may run as an MCP task gets a
 * session of its own, which stays open for the polls when it does.
 */
export async function callOverMcp(
  agent: AgentEndpoint & { id: string; version: number },
  { category, entry }: McpOperation,
  params: Record<string, unknown>,
  options: McpCallOptions,
): Promise<McpCallVerdict> {
  const inOwnSession = category === 'tools' && runsAsMcpTask(entry);
  // A request a server answered with URLElicitationRequiredError is sent again within this bound.
  const deadline = Date.now() + options.timeoutMs;
  const request = (session: McpSession) =>
    afterUrlElicitations(deadline, (timeLeftMs) => requestOnce(session, category, entry, params, options, timeLeftMs));
  if (options.sessions && !inOwnSession) {
    try {
      return await options.sessions.withSession(agent, request);
    } catch (error) {
      return verdictOfError(error);
    }
  }
  let session: McpSession | undefined;
  let keepSession = false;
  try {
    session = await McpSession.open(agent, options);
    const verdict = await request(session);
    keepSession = verdict.kind === 'mcpTask';
    return verdict;
  } catch (error) {
    return verdictOfError(error);
  } finally {
    await session?.close(keepSession);
  }
}

/**
 * The one MCP request `category`/`entry` stands for, and what its answer means; bounded by
 * `timeLeftMs` rather than the session's timeout when given (a request sent again).
 */
async function requestOnce(
  session: McpSession,
  category: string,
  entry: McpOperation['entry'],
  params: Record<string, unknown>,
  { onProgress, signal }: Pick<McpCallOptions, 'onProgress' | 'signal'>,
  timeLeftMs?: number,
): Promise<McpCallVerdict> {
  const onprogress = ({ progress, total, message }: { progress: number; total?: number; message?: string }) =>
    onProgress({
      ...(total !== undefined && total > 0 ? { progress: Math.min(1, Math.max(0, progress / total)) } : {}),
      ...(message === undefined ? {} : { message }),
    });
  // The call's own signal: a kept session outlives the call that opened it.
  const requestOptions = session.requestOptions({
    onprogress,
    resetTimeoutOnProgress: false,
    signal,
    ...(timeLeftMs === undefined ? {} : { timeout: timeLeftMs, maxTotalTimeout: timeLeftMs }),
  });
  switch (category) {
    case 'tools': {
      const call = { name: entry.name, arguments: params };
      const ref = session.ref;
      if (runsAsMcpTask(entry) && ref) {
        const { task } = await session.client.request(
          { method: 'tools/call', params: { ...call, task: {} } },
          CreateTaskResultSchema,
          requestOptions,
        );
        return {
          kind: 'mcpTask',
          handle: {
            mcpTaskId: task.taskId,
            ...ref,
            ...(task.pollInterval === undefined ? {} : { pollIntervalMs: task.pollInterval }),
          },
        };
      }
      return toolVerdict(
        await session.client.request({ method: 'tools/call', params: call }, CallToolResultSchema, requestOptions),
      );
    }
    case 'resources': {
      const read = await session.client.request(
        { method: 'resources/read', params: { uri: entry.uri ?? entry.name } },
        ReadResourceResultSchema,
        requestOptions,
      );
      return { kind: 'completed', result: { contents: read.contents } };
    }
    case 'prompts': {
      const prompt = await session.client.request(
        { method: 'prompts/get', params: { name: entry.name, arguments: stringArguments(params) } },
        GetPromptResultSchema,
        requestOptions,
      );
      return {
        kind: 'completed',
        result: {
          ...(prompt.description === undefined ? {} : { description: prompt.description }),
          messages: prompt.messages,
        },
      };
    }
    default:
      return {
        kind: 'refused',
        error: { code: TaskErrorCode.AGENT_REJECTED, message: `MCP has no ${category} to call: ${entry.name}` },
      };
  }
}

/** A tool's answer: `structuredContent` when present, else `{content}`; `isError` fails the task with the text content as message. */
export function toolVerdict(result: CallToolResult): McpCallVerdict {
  if (result.isError === true) {
    const text = result.content
      .flatMap((block) => (block.type === 'text' ? [block.text] : []))
      .join('\n')
      .trim();
    return {
      kind: 'failed',
      error: {
        code: TaskErrorCode.AGENT_TOOL_ERROR,
        message: text === '' ? 'The tool reported an error' : text,
        details: { content: result.content },
      },
    };
  }
  if (result.structuredContent !== undefined)
    return { kind: 'completed', result: normaliseResult(result.structuredContent) };
  return { kind: 'completed', result: { content: result.content } };
}

/** MCP prompt arguments are strings: other JSON values go as their JSON text. */
function stringArguments(params: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(params).map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]),
  );
}

/**
 * What a failed request means for the task: the server's answer is a verdict, retried or final;
 * anything else (network trouble, the guard's refusal, a cancellation) is thrown on, as a signed
 * POST's is.
 */
export function verdictOfError(error: unknown): McpCallVerdict {
  // A JSON answer cut short throws ReplyTooLarge; an SSE one ends with the error standing in for it.
  const tooLarge =
    causeOf(error, ReplyTooLarge)?.message ??
    (error instanceof McpError && error.code === REPLY_TOO_LARGE
      ? error.message.replace(/^MCP error -?\d+: /, '')
      : undefined);
  if (tooLarge !== undefined)
    return {
      kind: 'refused',
      error: { code: TaskErrorCode.AGENT_PROTOCOL_ERROR, message: `MCP server's ${tooLarge}` },
    };
  if (error instanceof StreamableHTTPError) {
    const status = error.code;
    const answered = `MCP server answered ${serverAnswerOf(error)}`;
    if (status === undefined) return { kind: 'retry', reason: answered };
    return verdictOfRefusedStatus(status, answered);
  }
  if (error instanceof McpError) {
    if (error.code === (JsonRpcError.RequestTimeout as number))
      return { kind: 'retry', reason: `MCP request timed out: ${error.message}` };
    if (FINAL_JSON_RPC_ERRORS.has(error.code)) return rejectedByJsonRpc(error.message, error.code, error.data);
    return { kind: 'retry', reason: error.message };
  }
  if ((error as Error)?.name === 'ZodError' || (error as Error)?.name === '$ZodError') {
    return {
      kind: 'refused',
      error: {
        code: TaskErrorCode.AGENT_PROTOCOL_ERROR,
        message: `MCP server's answer is outside the protocol: ${(error as Error).message}`,
      },
    };
  }
  throw error;
}
