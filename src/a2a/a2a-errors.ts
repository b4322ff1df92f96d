import { ApiError, ErrorCode } from '../http/errors';
import { UnparsedBodyError } from '../http/body';
import { JsonRpcCode, JsonRpcError } from './json-rpc';

/** The ErrorInfo domain of A2A's errors and JSON-RPC's own (A2A 1.0 §10.6, §11.6). */
export const A2A_ERROR_DOMAIN = 'a2a-protocol.org';
/** The ErrorInfo domain of the service's own refusals, whose reasons are its error codes (docs/api.md). */
export const SERVICE_ERROR_DOMAIN = 'agent-coordination-service.dev';

/**
 * Each code's ErrorInfo reason: A2A's error name in UPPER_SNAKE_CASE without "Error" (§5.4, §9.5),
 * JSON-RPC's standard errors as A2A names them. A Map: a code is a number, never a member name.
 */
const A2A_REASONS = new Map<number, string>([
  [JsonRpcCode.PARSE_ERROR, 'JSON_PARSE'],
  [JsonRpcCode.INVALID_REQUEST, 'INVALID_REQUEST'],
  [JsonRpcCode.METHOD_NOT_FOUND, 'METHOD_NOT_FOUND'],
  [JsonRpcCode.INVALID_PARAMS, 'INVALID_PARAMS'],
  [JsonRpcCode.INTERNAL_ERROR, 'INTERNAL'],
  [JsonRpcCode.TASK_NOT_FOUND, 'TASK_NOT_FOUND'],
  [JsonRpcCode.TASK_NOT_CANCELABLE, 'TASK_NOT_CANCELABLE'],
  [JsonRpcCode.PUSH_NOTIFICATION_NOT_SUPPORTED, 'PUSH_NOTIFICATION_NOT_SUPPORTED'],
  [JsonRpcCode.UNSUPPORTED_OPERATION, 'UNSUPPORTED_OPERATION'],
  [JsonRpcCode.CONTENT_TYPE_NOT_SUPPORTED, 'CONTENT_TYPE_NOT_SUPPORTED'],
  [JsonRpcCode.VERSION_NOT_SUPPORTED, 'VERSION_NOT_SUPPORTED'],
]);

/** A2A's own errors (§5.4), whose ErrorInfo must name A2A's reason whatever raised them. */
const isA2aSpecific = (code: number) => code <= -32001 && code >= -32099 && A2A_REASONS.has(code);

/**
 * The one table of the service's errors on the JSON-RPC endpoint (docs/a2a.md, "Errors"): the
 * JSON-RPC error each becomes, answered 200 as JSON-RPC over HTTP and A2A's clients expect; or
 * `HTTP`, the REST API's answer, where HTTP itself acts on the status: credentials (401), an
 * endpoint that is not there (404), a body not read (413), a time to retry after (408, 429, 503), a
 * failure of the service (500). Every non-2xx answer keeps the contract's body (docs/api.md).
 */
const HTTP = 'http';
const FROM_API_ERROR: Record<ErrorCode, number | typeof HTTP> = {
  VALIDATION_ERROR: JsonRpcCode.INVALID_PARAMS,
  OPERATION_NOT_SUPPORTED: JsonRpcCode.INVALID_PARAMS,
  INVALID_COMPOSITION: JsonRpcCode.INVALID_PARAMS,
  UNAUTHENTICATED: HTTP,
  // A task the caller may not act on is one it cannot see: A2A says not to tell them apart.
  FORBIDDEN: JsonRpcCode.TASK_NOT_FOUND,
  NOT_FOUND: JsonRpcCode.TASK_NOT_FOUND,
  AGENT_NOT_FOUND: HTTP,
  METHOD_NOT_ALLOWED: HTTP,
  // A task's state that does not allow the act (an input to a task that asks for none).
  CONFLICT: JsonRpcCode.UNSUPPORTED_OPERATION,
  CAPABILITY_IMPORT_FAILED: HTTP,
  TASK_DEPTH_EXCEEDED: JsonRpcCode.TASK_DEPTH_EXCEEDED,
  REQUEST_TIMEOUT: HTTP,
  PAYLOAD_TOO_LARGE: HTTP,
  UNSUPPORTED_MEDIA_TYPE: JsonRpcCode.INVALID_REQUEST,
  RATE_LIMITED: HTTP,
  INTERNAL: HTTP,
  UNAVAILABLE: HTTP,
};

/**
 * The service's error as the JSON-RPC endpoint answers it (a body that did not parse is JSON-RPC's
 * Parse error), or undefined when it stays the REST API's answer.
 */
export function jsonRpcErrorOf(error: ApiError): JsonRpcError | undefined {
  if (error instanceof UnparsedBodyError) return new JsonRpcError(JsonRpcCode.PARSE_ERROR, error.message);
  const code = FROM_API_ERROR[error.code];
  if (code === HTTP) return undefined;
  return new JsonRpcError(code, error.message, { serviceCode: error.code, details: error.details });
}

/** `thrown` as a JSON-RPC error, or undefined for what the REST API answers. */
export function asJsonRpcError(thrown: unknown): JsonRpcError | undefined {
  if (thrown instanceof JsonRpcError) return thrown;
  if (thrown instanceof ApiError) return jsonRpcErrorOf(thrown);
  return undefined;
}

/**
 * The JSON-RPC response of an error. Its `data` is A2A's error details (§9.5): first a
 * `google.rpc.ErrorInfo`, with A2A's reason and domain for A2A's and JSON-RPC's errors, the
 * service's error code and domain for a refusal of the service's own; then the REST API's `details`
 * of the same refusal, as a `google.rpc.BadRequest` when they are field problems, else a
 * `google.protobuf.Value`.
 */
export function errorResponse(id: string | number | null, error: JsonRpcError) {
  const { serviceCode, metadata, details } = error.detail;
  const ours = serviceCode !== undefined && !isA2aSpecific(error.code);
  const errorInfo = {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason: ours ? serviceCode : (A2A_REASONS.get(error.code) ?? 'UNKNOWN'),
    domain: ours || !A2A_REASONS.has(error.code) ? SERVICE_ERROR_DOMAIN : A2A_ERROR_DOMAIN,
    ...(metadata === undefined ? {} : { metadata }),
  };
  const data = details === undefined ? [errorInfo] : [errorInfo, detailsAsAny(details)];
  return { jsonrpc: '2.0' as const, id, error: { code: error.code, message: error.message, data } };
}

/** Field problems (`[{path, message}]`, as validation reports them) as a BadRequest; anything else as a Value. */
function detailsAsAny(details: unknown) {
  const problems = Array.isArray(details) && details.every(isProblem) ? details : undefined;
  if (problems)
    return {
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: problems.map(({ path, message }) => ({ field: path, description: message })),
    };
  return { '@type': 'type.googleapis.com/google.protobuf.Value', value: details };
}

function isProblem(value: unknown): value is { path: string; message: string } {
  const { path, message } = (value ?? {}) as { path?: unknown; message?: unknown };
  return typeof path === 'string' && typeof message === 'string';
}
