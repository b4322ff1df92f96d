/**
 * JSON Schemas of the task service's requests, checked once at the edge (src/http/validate.ts). Exported by
 * name so the OpenAPI document can be built from them. Limits that depend on configuration
 * (composition size, timeoutMs ceiling) are checked in code.
 */

import { ApiError, ErrorCode } from '../http/errors';
import { HTTP_URL_FIELD } from '../registry/registration-schema';
import { ItemFailurePolicy } from '../../workflows/task-types';

const MAX_RETRY_INTERVAL_MS = 24 * 3_600_000;

export const RETRY_POLICY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    maxAttempts: { type: 'integer', minimum: 1, maximum: 100 },
    initialIntervalMs: { type: 'integer', minimum: 1, maximum: MAX_RETRY_INTERVAL_MS },
    backoffCoefficient: { type: 'number', minimum: 1, maximum: 10 },
    maxIntervalMs: { type: 'integer', minimum: 1, maximum: MAX_RETRY_INTERVAL_MS },
  },
} as const;

export const TASK_FIELDS = {
  agentId: { type: 'string', minLength: 1, maxLength: 256 },
  operation: { type: 'string', minLength: 1, maxLength: 300 },
  params: { type: 'object' },
  callbackUrl: HTTP_URL_FIELD,
  timeoutMs: { type: 'integer', minimum: 1_000 },
  retry: RETRY_POLICY_SCHEMA,
} as const;

/** `POST /tasks`. */
export const TASK_REQUEST_SCHEMA = {
  type: 'object',
  required: ['agentId', 'operation', 'params'],
  additionalProperties: false,
  properties: TASK_FIELDS,
} as const;

/** A value in a parent's result: `taskId` names the parent, `field` is a name or a JSON Pointer. */
const PARENT_FIELD_SCHEMA = {
  type: 'object',
  required: ['taskId', 'field'],
  additionalProperties: false,
  properties: {
    taskId: { type: 'string', maxLength: 16 },
    field: { type: 'string', minLength: 1, maxLength: 1_000 },
  },
} as const;

/**
 * `when`: the task runs only if the value at `field` of the parent `taskId`'s result matches `schema`
 * (a JSON Schema, compiled as an agent's tool schema is, in code).
 */
export const TASK_CONDITION_SCHEMA = {
  type: 'object',
  required: ['source', 'schema'],
  additionalProperties: false,
  properties: {
    source: PARENT_FIELD_SCHEMA,
    schema: { type: 'object' },
  },
} as const;

/** The most items of one map that run at once (`forEach.maxConcurrency`). */
export const MAX_MAP_CONCURRENCY = 100;

/**
 * `forEach`: the task runs once per element of the array at `field` (a name or a JSON Pointer) of the
 * parent `taskId`'s result.
 */
export const MAP_REQUEST_SCHEMA = {
  type: 'object',
  required: ['source'],
  additionalProperties: false,
  properties: {
    source: PARENT_FIELD_SCHEMA,
    maxConcurrency: { type: 'integer', minimum: 1, maximum: MAX_MAP_CONCURRENCY },
    onItemFailure: { enum: [ItemFailurePolicy.FAIL, ItemFailurePolicy.CONTINUE] },
  },
} as const;

/** An element of `POST /tasks/compose`: a task request plus its place in the graph. */
export const COMPOSED_TASK_SCHEMA = {
  ...TASK_REQUEST_SCHEMA,
  properties: {
    ...TASK_FIELDS,
    parents: { type: 'array', maxItems: 10_000, items: { type: 'string', maxLength: 16 } },
    executeOnParentFailure: { type: 'boolean' },
    when: TASK_CONDITION_SCHEMA,
    runIfParentSkipped: { type: 'boolean' },
    forEach: MAP_REQUEST_SCHEMA,
  },
} as const;

/** `POST /tasks/compose`; at most MAX_COMPOSITION_SIZE elements (413 above). */
export const COMPOSITION_REQUEST_SCHEMA = {
  type: 'array',
  minItems: 1,
  items: COMPOSED_TASK_SCHEMA,
} as const;

/** 413 for a composition of more than `max` tasks, the bound MAX_COMPOSITION_SIZE sets. */
export function refuseOversizedComposition(count: number, max: number): void {
  if (count > max)
    throw new ApiError(ErrorCode.PAYLOAD_TOO_LARGE, `A composition holds at most ${max} tasks, got ${count}`);
}

/** `POST /tasks/{taskId}/result`: an agent's report on a task it answered 202 to. */
export const AGENT_REPORT_SCHEMA = {
  type: 'object',
  required: ['status'],
  additionalProperties: false,
  properties: {
    taskId: { type: 'string' },
    status: { enum: ['completed', 'failed', 'pending', 'input-required'] },
    result: {},
    // Any JSON value but null, kept as the agent sent it.
    error: { not: { type: 'null' } },
    message: { type: 'string', maxLength: 10_000 },
    progress: { type: 'number', minimum: 0, maximum: 1 },
    // An input-required report: what the input must be. Compiled as an agent's tool schema is.
    inputSchema: { type: 'object' },
  },
} as const;

/** `POST /tasks/{taskId}/input`: a person's answer to the task's open input request. */
export const TASK_INPUT_SCHEMA = {
  type: 'object',
  required: ['input'],
  additionalProperties: false,
  properties: {
    input: {},
    requestId: { type: 'string', minLength: 1, maxLength: 256 },
  },
} as const;

/** The longest a request waits for a pending task to end: `GET /tasks/{taskId}?waitMs=`, A2A's blocking SendMessage. */
export const MAX_TASK_WAIT_MS = 30_000;

/** `GET /tasks/{taskId}?waitMs=`: how long to wait for a pending task to end, 0 to MAX_TASK_WAIT_MS, as a query string carries it. */
export const TASK_LOOKUP_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    waitMs: {
      type: 'string',
      pattern: '^(?:0|[1-9][0-9]{0,3}|[12][0-9]{4}|30000)$',
      description: 'must be a whole number of milliseconds from 0 to 30000',
    },
  },
} as const;

export interface TaskLookupQuery {
  waitMs?: string;
}
