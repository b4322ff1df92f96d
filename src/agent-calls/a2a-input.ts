import { createHash } from 'node:crypto';

/** An A2A task as GetTask or SendMessage answers it: the members a request for input is read from. */
interface A2aTaskSeen {
  id?: unknown;
  contextId?: unknown;
  status?: { state?: unknown; timestamp?: unknown; message?: { messageId?: unknown; parts?: unknown } };
}

/** A2A task states that wait for the client: relayed to a person as the task's input request. */
const INTERRUPTED_STATES = new Map([
  ['TASK_STATE_INPUT_REQUIRED', 'The A2A agent asks for input'],
  ['TASK_STATE_AUTH_REQUIRED', 'The A2A agent asks for authorisation'],
]);

/** What an A2A agent's task waiting for input asks a person, and where the answer goes. */
export interface A2aInputRequest {
  /** The task's input request (docs/api.md, "Input required"). */
  request: { requestId: string; message: string; inputSchema?: Record<string, unknown> };
  /** The agent's task and context, which the answer's message names. */
  a2aTaskId: string;
  contextId?: string;
}

export const isInterrupted = (state: unknown): boolean => typeof state === 'string' && INTERRUPTED_STATES.has(state);

/**
 * The input request an A2A task in TASK_STATE_INPUT_REQUIRED or TASK_STATE_AUTH_REQUIRED makes:
 * its status message's text (else the `message` of its data part) as the message, and the
 * `inputSchema` of its data part, as this service's own A2A endpoint sends them (docs/a2a.md).
 * The requestId is drawn from the agent's task and status message, so that every poll that sees the
 * same request names it alike. Undefined for a task in another state.
 */
export function a2aInputRequestOf(task: A2aTaskSeen): A2aInputRequest | undefined {
  const state = task.status?.state;
  if (typeof task.id !== 'string' || !isInterrupted(state)) return undefined;
  const statusMessage = task.status?.message;
  const parts = Array.isArray(statusMessage?.parts)
    ? (statusMessage.parts as Array<{ text?: unknown; data?: unknown }>)
    : [];
  const texts = parts.flatMap((part) => (typeof part.text === 'string' ? [part.text] : []));
  const data = parts.find((part) => typeof part.data === 'object' && part.data !== null && !Array.isArray(part.data))
    ?.data as { message?: unknown; inputSchema?: unknown } | undefined;
  const inputSchema = data?.inputSchema;
  const message =
    texts.length > 0
      ? texts.join('\n')
      : typeof data?.message === 'string'
        ? data.message
        : INTERRUPTED_STATES.get(state as string)!;
  // The agent names its message (A2A requires a messageId); the status's time or content otherwise.
  const said =
    [statusMessage?.messageId, task.status?.timestamp].find((name) => typeof name === 'string') ??
    JSON.stringify(task.status);
  return {
    a2aTaskId: task.id,
    ...(typeof task.contextId === 'string' ? { contextId: task.contextId } : {}),
    request: {
      requestId: uuidOf(`${task.id}\n${said}`),
      message,
      ...(typeof inputSchema === 'object' && inputSchema !== null && !Array.isArray(inputSchema)
        ? { inputSchema: inputSchema as Record<string, unknown> }
        : {}),
    },
  };
}

/** A UUID-shaped name of `text`: the same text, the same name. */
function uuidOf(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * A person's answer as the message that continues the agent's task, in its task and context: a
 * string, or `{text}` alone, as a text part; anything else as a data part. Its messageId is the
 * same for every attempt, so an agent that deduplicates takes it once.
 */
export function a2aInputMessage(
  taskId: string,
  { a2aTaskId, contextId, request }: A2aInputRequest,
  input: unknown,
): Record<string, unknown> {
  const text =
    typeof input === 'string'
      ? input
      : typeof input === 'object' &&
          input !== null &&
          Object.keys(input).length === 1 &&
          typeof (input as { text?: unknown }).text === 'string'
        ? (input as { text: string }).text
        : undefined;
  return {
    messageId: `${taskId}-input-${request.requestId}`,
    role: 'ROLE_USER',
    taskId: a2aTaskId,
    ...(contextId === undefined ? {} : { contextId }),
    parts: [text === undefined ? { data: input, mediaType: 'application/json' } : { text }],
  };
}
