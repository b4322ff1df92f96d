import { A2aHttpError, A2aProtocolError, A2aRpcError, a2aRequest, type A2aRequestOptions } from './a2a-client';
import { causeOf } from '../ops/describe-error';
import { ReplyTooLarge } from './guarded-fetch';
import { isInterrupted } from './a2a-input';
import type { AgentEndpoint } from './agent-endpoint';
import type { A2aPushConfig } from './a2a-push';
import type { AgentReplyVerdict } from './agent-reply';
import { rejectedByJsonRpc, verdictOfRefusedStatus } from './agent-reply';
import { normaliseResult, TaskErrorCode, type A2aTaskHandle, type TaskResult } from '../../workflows/task-types';

/** What one A2A request means for its task: the verdicts of a signed POST, or a task the agent goes on with. */
export type A2aCallVerdict =
  Exclude<AgentReplyVerdict, { kind: 'accepted' }> | { kind: 'a2aTask'; handle: A2aTaskHandle };

/** A2A task states the agent goes on from: followed with GetTask. The others, but those waiting for input, end ours (verdictOfTask). */
const WORKING_STATES = new Set(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']);

/**
 * JSON-RPC errors that say the request itself is wrong, and A2A's own (-32001 task not found …
 * -32009 version not supported): another attempt would get the same answer. Others (-32603
 * internal error, say) are retried.
 */
const FINAL_ERRORS = new Set([-32700, -32600, -32601, -32602]);
const isA2aError = (code: number) => code <= -32001 && code >= -32099;

/** One part of an A2A 1.0 message or artifact, in its JSON form. */
interface A2aPart {
  text?: unknown;
  data?: unknown;
  url?: unknown;
  raw?: unknown;
  mediaType?: unknown;
}

export interface A2aTaskJson {
  id?: unknown;
  contextId?: unknown;
  status?: { state?: unknown; timestamp?: unknown; message?: { messageId?: unknown; parts?: unknown } };
  artifacts?: unknown;
}

/**
 * `SendMessage` of `skill` (the operation `tools/<skill>`) to an A2A agent, with `returnImmediately`: the
 * agent answers at once, and a task it goes on with is followed by the workflow with GetTask on
 * timers, however long it runs. The message's id is the task's, on every attempt, so an agent that
 * deduplicates starts it once. Params `{text}` alone go as a text part, anything else as the data
 * part `{skill, params}` the service's own A2A endpoint reads (docs/a2a.md). With `push`, the agent
 * is asked to push the task's updates there, and a task it goes on with is marked so, to be polled
 * seldom.
 */
export async function callOverA2a(
  agent: AgentEndpoint,
  taskId: string,
  skill: string,
  params: Record<string, unknown>,
  options: A2aRequestOptions,
  push?: A2aPushConfig,
): Promise<A2aCallVerdict> {
  const onlyText = Object.keys(params).length === 1 && typeof params.text === 'string';
  const message = {
    messageId: taskId,
    role: 'ROLE_USER',
    parts: [onlyText ? { text: params.text } : { data: { skill, params }, mediaType: 'application/json' }],
    metadata: { skill },
  };
  try {
    const answer = (await a2aRequest(
      agent,
      'SendMessage',
      {
        message,
        configuration: {
          returnImmediately: true,
          acceptedOutputModes: ['application/json', 'text/plain'],
          ...(push ? { taskPushNotificationConfig: push } : {}),
        },
      },
      options,
    )) as { task?: A2aTaskJson; message?: { parts?: unknown } };
    if (answer.task !== undefined) {
      const verdict = verdictOfTask(answer.task);
      return push && verdict.kind === 'a2aTask' ? { ...verdict, handle: { ...verdict.handle, pushed: true } } : verdict;
    }
    if (answer.message !== undefined) return { kind: 'completed', result: resultOfParts(answer.message.parts) };
    return outsideProtocol('its SendMessage answer holds neither a task nor a message');
  } catch (error) {
    return verdictOfA2aError(error);
  }
}

/**
 * What an A2A task means for ours: still working (followed, with its id), completed with its
 * artifacts as the result, or failed. A task waiting for input or authorisation is followed too:
 * its polls relay the request to a person (activities/a2a-input-relay.ts).
 */
export function verdictOfTask(task: A2aTaskJson): A2aCallVerdict {
  const state = task.status?.state;
  if (typeof task.id !== 'string' || typeof state !== 'string')
    return outsideProtocol('its task has no id or no status.state');
  if (WORKING_STATES.has(state) || isInterrupted(state)) return { kind: 'a2aTask', handle: { a2aTaskId: task.id } };
  const said = textOf(task.status?.message?.parts);
  switch (state) {
    case 'TASK_STATE_COMPLETED':
      return { kind: 'completed', result: resultOfArtifacts(task.artifacts, task.status?.message?.parts) };
    case 'TASK_STATE_REJECTED':
      return failed(TaskErrorCode.AGENT_REJECTED, said ?? 'The A2A agent rejected the task', state);
    case 'TASK_STATE_FAILED':
    case 'TASK_STATE_CANCELED':
      return failed(TaskErrorCode.AGENT_TOOL_ERROR, said ?? `The A2A agent's task ended ${state}`, state);
    default:
      return outsideProtocol(`its task is in an unknown state ${state}`);
  }
}

function failed(code: TaskErrorCode, message: string, state: string): A2aCallVerdict {
  return { kind: 'failed', error: { code, message, details: { state } } };
}

function outsideProtocol(why: string): A2aCallVerdict {
  return {
    kind: 'refused',
    error: { code: TaskErrorCode.AGENT_PROTOCOL_ERROR, message: `A2A agent's answer is outside the protocol: ${why}` },
  };
}

/**
 * A completed task's result: its one artifact's parts, or `{artifacts}` with each artifact's; with
 * none, what its status message says (an agent may answer there), else `{}`.
 */
function resultOfArtifacts(artifacts: unknown, statusParts: unknown): TaskResult {
  const list = Array.isArray(artifacts) ? (artifacts as Array<{ name?: unknown; parts?: unknown }>) : [];
  if (list.length === 1) return resultOfParts(list[0].parts);
  if (list.length === 0) return statusParts === undefined ? {} : resultOfParts(statusParts);
  return {
    artifacts: list.map((artifact) => ({
      ...(typeof artifact.name === 'string' ? { name: artifact.name } : {}),
      result: resultOfParts(artifact.parts),
    })),
  };
}

/** Parts as a result: one data part is its data; text parts alone are `{text}`; anything else `{parts}` as sent. */
export function resultOfParts(parts: unknown): TaskResult {
  const list = Array.isArray(parts) ? (parts as A2aPart[]) : [];
  if (list.length === 1 && list[0].data !== undefined) return normaliseResult(list[0].data);
  const text = textOf(list);
  if (text !== undefined && list.every((part) => typeof part.text === 'string')) return { text };
  return { parts: list };
}

/** The text parts joined by line breaks; undefined when there are none. */
function textOf(parts: unknown): string | undefined {
  const texts = (Array.isArray(parts) ? (parts as A2aPart[]) : []).flatMap((part) =>
    typeof part.text === 'string' ? [part.text] : [],
  );
  return texts.length === 0 ? undefined : texts.join('\n');
}

/**
 * What a failed A2A request means for the task: the agent's answer is a verdict, retried or final;
 * anything else (network trouble, the guard's refusal, a cancellation) is thrown on.
 */
export function verdictOfA2aError(error: unknown): A2aCallVerdict {
  const tooLarge = causeOf(error, ReplyTooLarge);
  if (tooLarge)
    return {
      kind: 'refused',
      error: { code: TaskErrorCode.AGENT_PROTOCOL_ERROR, message: `A2A agent's ${tooLarge.message}` },
    };
  if (error instanceof A2aHttpError) {
    return verdictOfRefusedStatus(error.status, `A2A agent answered ${error.message}`);
  }
  if (error instanceof A2aRpcError) {
    if (!FINAL_ERRORS.has(error.code) && !isA2aError(error.code)) return { kind: 'retry', reason: error.message };
    return rejectedByJsonRpc(error.message, error.code, error.data);
  }
  if (error instanceof A2aProtocolError) return outsideProtocol(error.message);
  throw error;
}
