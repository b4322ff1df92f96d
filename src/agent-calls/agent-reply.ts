import { MAX_JSON_DEPTH, jsonTextNestsDeeperThan } from '../http/json-depth';
import { normaliseResult, TaskErrorCode, type TaskError, type TaskResult } from '../../workflows/task-types';

/** What one HTTP reply of an agent means for its task (docs/api.md, "Tasks": call to the agent). */
export type AgentReplyVerdict =
  | { kind: 'completed'; result: TaskResult }
  | { kind: 'failed'; error: TaskError }
  | { kind: 'accepted' }
  /** Worth another attempt: 408, 429, 5xx. */
  | { kind: 'retry'; reason: string }
  /** Final without the agent's own error body: 400/404/422, or a reply outside the protocol. */
  | { kind: 'refused'; error: { code: string; message: string; details?: unknown } };

/** The verdicts of a reply that does not answer the task: worth another attempt, or refused. */
export type NotAnswered = Extract<AgentReplyVerdict, { kind: 'retry' | 'refused' }>;

const RETRIED_STATUSES = new Set([408, 429]);
const REJECTED_STATUSES = new Set([400, 404, 422]);
const ACCEPTED_STATUSES = new Set(['pending', 'executing', 'received']);
const OVERSIZED_BODY = '(longer than MAX_BODY_BYTES: not read)';

/** Longest part of a refusing agent's body quoted in a retried attempt's error (and the Web UI's last failure). */
const EXCERPT_CHARS = 200;

/** `: <the body's start>` on one line, or nothing for an empty body. */
function excerptOf(bodyText: string | null): string {
  if (bodyText === null) return ' (body longer than MAX_BODY_BYTES)';
  const flat = bodyText.replace(/\s+/g, ' ').trim();
  if (flat === '') return '';
  return `: ${flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS - 1)}…` : flat}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether an HTTP status from a receiver is worth another attempt: 408, 429 and 5xx. */
export function isRetriedStatus(status: number): boolean {
  return RETRIED_STATUSES.has(status) || status >= 500;
}

/** An agent's refusal at the HTTP level, over MCP or A2A: retried for 408, 429 and 5xx, else final AGENT_REJECTED with its status. */
export function verdictOfRefusedStatus(status: number, answered: string): NotAnswered {
  if (isRetriedStatus(status)) return { kind: 'retry', reason: answered };
  return { kind: 'refused', error: { code: TaskErrorCode.AGENT_REJECTED, message: answered, details: { status } } };
}

/** A JSON-RPC error that says the request itself is wrong: final AGENT_REJECTED, with its code and data. */
export function rejectedByJsonRpc(message: string, code: number, data: unknown): NotAnswered {
  return {
    kind: 'refused',
    error: {
      code: TaskErrorCode.AGENT_REJECTED,
      message,
      details: { code, ...(data === undefined ? {} : { data }) },
    },
  };
}

/** `bodyText` is null for a body longer than the service reads (MAX_BODY_BYTES): only its status counts then. */
export function interpretAgentReply(status: number, bodyText: string | null): AgentReplyVerdict {
  if (isRetriedStatus(status)) return { kind: 'retry', reason: `agent answered HTTP ${status}${excerptOf(bodyText)}` };
  const parsed = bodyText === null ? undefined : parseJson(bodyText);
  // Read as unparseable: a result or error this deep could not be stored.
  const tooDeep = bodyText !== null && jsonTextNestsDeeperThan(bodyText, MAX_JSON_DEPTH);
  const body = tooDeep ? undefined : parsed;
  const reported =
    typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const is2xx = status >= 200 && status < 300;

  if (
    reported.status === 'failed' &&
    reported.error !== undefined &&
    reported.error !== null &&
    (is2xx || (status >= 400 && status < 500))
  ) {
    return { kind: 'failed', error: reported.error as TaskError };
  }
  if ((status === 200 || status === 201) && reported.status === 'completed' && 'result' in reported) {
    return { kind: 'completed', result: normaliseResult(reported.result) };
  }
  if (status === 202 && typeof reported.status === 'string' && ACCEPTED_STATUSES.has(reported.status))
    return { kind: 'accepted' };
  const details = bodyText === null ? OVERSIZED_BODY : (body ?? bodyText.slice(0, 1024));
  if (REJECTED_STATUSES.has(status)) {
    return {
      kind: 'refused',
      error: { code: TaskErrorCode.AGENT_REJECTED, message: `Agent answered HTTP ${status}`, details },
    };
  }
  const what =
    bodyText === null
      ? 'a body longer than MAX_BODY_BYTES'
      : tooDeep
        ? `JSON nested deeper than ${MAX_JSON_DEPTH} levels`
        : 'a body outside the task protocol';
  return {
    kind: 'refused',
    error: { code: TaskErrorCode.AGENT_PROTOCOL_ERROR, message: `Agent answered HTTP ${status} with ${what}`, details },
  };
}
