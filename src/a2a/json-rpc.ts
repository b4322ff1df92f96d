import { ApiError } from '../http/errors';
import { validator } from '../http/validate';

/** JSON-RPC 2.0's own error codes, and those A2A 1.0 adds (docs/a2a.md, "Errors"). */
export const JsonRpcCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  CONTENT_TYPE_NOT_SUPPORTED: -32005,
  VERSION_NOT_SUPPORTED: -32009,
  /** The service's own: the task would lie deeper than MAX_TASK_DEPTH below its root (TASK_DEPTH_EXCEEDED). */
  TASK_DEPTH_EXCEEDED: -32050,
} as const;

/** What an error says beyond its code and message, as its `data` carries it (a2a-errors.ts). */
export interface JsonRpcErrorDetail {
  /** The service's own error code (docs/api.md) when the refusal is one the REST API names too. */
  serviceCode?: string;
  /** Context for the caller, as the ErrorInfo's `metadata`: `taskId`, `mediaType`, ... */
  metadata?: Record<string, string>;
  /** The REST API's `details` of the same refusal. */
  details?: unknown;
}

/** An error a method answers with: the JSON-RPC error object of its response. */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly detail: JsonRpcErrorDetail = {},
  ) {
    super(message);
  }
}

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id?: string | number | null;
  method: string;
  params?: Record<string, unknown>;
}

/** A JSON-RPC 2.0 request, as `POST /a2a/{agentId}` takes it (its params are each method's to check). */
export const JSON_RPC_REQUEST_SCHEMA = {
  type: 'object',
  required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }] },
    method: { type: 'string' },
    params: { type: 'object' },
  },
};

const checkRequest = validator<JsonRpcRequest>(JSON_RPC_REQUEST_SCHEMA, 'JSON-RPC request');

/** The request in `body`, or the JSON-RPC error (-32600) that says what is wrong with it. */
export function readRequest(body: unknown): JsonRpcRequest {
  try {
    return checkRequest(body);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw new JsonRpcError(JsonRpcCode.INVALID_REQUEST, error.message, { details: error.details });
  }
}
