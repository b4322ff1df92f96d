import { ApiError } from '../http/errors';
import { validator } from '../http/validate';
import { SEARCH_AGENTS_SCHEMA, type SearchAgentsParams } from '../registry/agent-search';
import { A2A_TASK_STATES } from './a2a-task';
import { JsonRpcCode, JsonRpcError } from './json-rpc';

/** A part of a message as A2A 1.0's JSON has it: the members the endpoint reads. */
export interface MessagePart {
  text?: string;
  data?: unknown;
  /** A file's bytes (base64) or address: parts the endpoint does not take. */
  raw?: string;
  url?: string;
  mediaType?: string;
}

export interface SendMessageParams {
  message: { messageId: string; parts: MessagePart[]; taskId?: string; contextId?: string };
  /**
   * `returnImmediately`: answer at once rather than once the task ended or asks for input. A push
   * notification config (A2A 1.0's `taskPushNotificationConfig`, 0.3's `pushNotificationConfig`) is refused.
   */
  configuration?: {
    returnImmediately?: boolean;
    taskPushNotificationConfig?: unknown;
    pushNotificationConfig?: unknown;
  };
}

export interface TaskIdParams {
  id: string;
}

export interface ListTasksParams {
  contextId?: string;
  status?: string;
  pageSize: number;
  pageToken?: string;
  statusTimestampAfter?: string;
  includeArtifacts?: boolean;
}

/** The most tasks one ListTasks page holds, and how many when the caller does not say. */
export const LIST_TASKS_PAGE = { max: 100, default: 50 } as const;

const TASK_ID = { type: 'string', minLength: 1, maxLength: 256 } as const;

/**
 * The params of each method, checked once at the edge. Members the endpoint does not read
 * (`tenant`, `metadata`, `configuration`, ...) may be there: A2A clients send them.
 */
const SCHEMAS = {
  SendMessage: {
    type: 'object',
    required: ['message'],
    properties: {
      configuration: { type: 'object', properties: { returnImmediately: { type: 'boolean' } } },
      message: {
        type: 'object',
        required: ['messageId', 'parts'],
        properties: {
          messageId: { type: 'string', minLength: 1, maxLength: 1024 },
          taskId: { type: 'string', maxLength: 256 },
          contextId: { type: 'string', maxLength: 256 },
          parts: {
            type: 'array',
            minItems: 1,
            maxItems: 64,
            items: { type: 'object', properties: { text: { type: 'string' }, mediaType: { type: 'string' } } },
          },
        },
      },
    },
  },
  SearchAgents: SEARCH_AGENTS_SCHEMA,
  TaskId: {
    type: 'object',
    required: ['id'],
    properties: { id: TASK_ID },
  },
  // historyLength is checked, though history is always empty: at most that many messages (none).
  GetTask: {
    type: 'object',
    required: ['id'],
    properties: { id: TASK_ID, historyLength: { type: 'integer', minimum: 0 } },
  },
  ListTasks: {
    type: 'object',
    properties: {
      contextId: { type: 'string', maxLength: 256 },
      status: { enum: ['TASK_STATE_UNSPECIFIED', ...A2A_TASK_STATES] },
      pageSize: { type: 'integer', minimum: 1, maximum: LIST_TASKS_PAGE.max, default: LIST_TASKS_PAGE.default },
      pageToken: { type: 'string', maxLength: 512 },
      statusTimestampAfter: { type: 'string', format: 'date-time' },
      historyLength: { type: 'integer', minimum: 0 },
      includeArtifacts: { type: 'boolean' },
    },
  },
} as const;

const checks = {
  SendMessage: validator<SendMessageParams>(SCHEMAS.SendMessage, 'SendMessage params'),
  SearchAgents: validator<SearchAgentsParams>(SCHEMAS.SearchAgents, 'search-agents params'),
  TaskId: validator<TaskIdParams>(SCHEMAS.TaskId, 'params'),
  GetTask: validator<TaskIdParams>(SCHEMAS.GetTask, 'GetTask params'),
  ListTasks: validator<ListTasksParams>(SCHEMAS.ListTasks, 'ListTasks params'),
};

/** `params` checked as `kind`'s, or the JSON-RPC error (-32602) that says what is wrong with them. */
export function paramsOf<K extends keyof typeof checks>(
  kind: K,
  params: Record<string, unknown>,
): ReturnType<(typeof checks)[K]> {
  try {
    return checks[kind](params) as ReturnType<(typeof checks)[K]>;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, error.message, { details: error.details });
  }
}

/** The media types a part may name: plain text for a text part, JSON for a data part (absent: those). */
const TAKES = {
  text: (mediaType: string) => mediaType === 'text/plain',
  data: (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json'),
};

/**
 * Refuses a message with a part of a media type no tool takes (A2A's ContentTypeNotSupported,
 * -32005): a file (`raw` or `url`), or a text or data part that names another type. The endpoint
 * sends a tool its params as JSON, from a data part or a lone tool's text.
 */
export function refuseUnsupportedParts(parts: MessagePart[]): void {
  for (const part of parts) {
    const mediaType = (part.mediaType ?? '').split(';')[0].trim().toLowerCase();
    const kind = part.raw !== undefined || part.url !== undefined ? 'file' : part.text !== undefined ? 'text' : 'data';
    if (kind === 'data' && part.data === undefined) continue;
    if (kind !== 'file' && (mediaType === '' || TAKES[kind](mediaType))) continue;
    throw new JsonRpcError(
      JsonRpcCode.CONTENT_TYPE_NOT_SUPPORTED,
      `A ${kind} part${mediaType ? ` of ${mediaType}` : ''} is not supported: parts are data (application/json) or text (text/plain)`,
      mediaType ? { metadata: { mediaType } } : {},
    );
  }
}

/** A push notification config is refused (-32003): the service's cards say their agents send none. */
export function refusePushConfig(configuration: SendMessageParams['configuration']): void {
  if (configuration?.taskPushNotificationConfig != null || configuration?.pushNotificationConfig != null)
    throw new JsonRpcError(
      JsonRpcCode.PUSH_NOTIFICATION_NOT_SUPPORTED,
      'Push notifications are not supported: follow the task with SubscribeToTask or GetTask',
    );
}

/**
 * The message's data part read as a call of a skill, `{skill?, params?}`, its params an object (`{}`
 * when left out); undefined when the message has no data part. -32602 for params of another kind.
 */
export function skillCallOf(parts: MessagePart[]): { skill: unknown; params: Record<string, unknown> } | undefined {
  const data = parts.find((part) => typeof part.data === 'object' && part.data !== null)?.data as
    { skill?: unknown; params?: unknown } | undefined;
  if (!data) return undefined;
  const params = data.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, "The data part's params must be an object");
  return { skill: data.skill, params: params as Record<string, unknown> };
}
