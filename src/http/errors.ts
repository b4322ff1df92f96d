/**
 * The service's own error codes (docs/api.md, "Errors of the service itself"), with the HTTP
 * status each one carries. Every non-2xx answer has the body `{error: {code, message, details?}}`.
 */
export const ErrorCode = {
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  OPERATION_NOT_SUPPORTED: 'OPERATION_NOT_SUPPORTED',
  INVALID_COMPOSITION: 'INVALID_COMPOSITION',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  AGENT_NOT_FOUND: 'AGENT_NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  CONFLICT: 'CONFLICT',
  /** An MCP agent's capabilities could not be read from its server. */
  CAPABILITY_IMPORT_FAILED: 'CAPABILITY_IMPORT_FAILED',
  /** A task started on behalf of another would lie deeper below its root than MAX_TASK_DEPTH. */
  TASK_DEPTH_EXCEEDED: 'TASK_DEPTH_EXCEEDED',
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  RATE_LIMITED: 'RATE_LIMITED',
  INTERNAL: 'INTERNAL',
  UNAVAILABLE: 'UNAVAILABLE',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const STATUS_OF: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  OPERATION_NOT_SUPPORTED: 400,
  INVALID_COMPOSITION: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  AGENT_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  CAPABILITY_IMPORT_FAILED: 422,
  TASK_DEPTH_EXCEEDED: 422,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
};

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/** An error that is the caller's to see: thrown anywhere, turned into the contract's body at the edge. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = STATUS_OF[code];
  }

  toBody(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details === undefined ? {} : { details: this.details }),
      },
    };
  }
}

/** Why the service answered 503 (docs/operations.md): each is a different thing for an operator to look at. */
export const UnavailableReason = {
  /** MongoDB did not answer. */
  MONGODB: 'mongodb',
  /** FerretDB or MongoDB answered "busy" (a write conflict it asks to retry). */
  DATABASE_BUSY: 'database_busy',
  /** Temporal did not answer, or said "not now". */
  TEMPORAL: 'temporal',
  /** GET /readyz: a dependency is down. */
  NOT_READY: 'not_ready',
  /** A launch with an Idempotency-Key is being finished or undone by another request. */
  LAUNCH_IN_DOUBT: 'launch_in_doubt',
  /** No worker recorded a cancellation in time. */
  CANCELLATION_PENDING: 'cancellation_pending',
  /** Every thread that checks data against agents' schemas is busy, and too many checks wait. */
  SCHEMA_CHECKS_BUSY: 'schema_checks_busy',
} as const;
export type UnavailableReason = (typeof UnavailableReason)[keyof typeof UnavailableReason];

/** A 503: the service cannot answer now, for a `reason` the metrics count (acs_unavailable_responses_total). */
export class UnavailableError extends ApiError {
  constructor(
    readonly reason: UnavailableReason,
    message: string,
    details?: unknown,
    headers: Record<string, string> = {},
  ) {
    super(ErrorCode.UNAVAILABLE, message, details, headers);
  }
}

export const notFound = (what: string): ApiError => new ApiError(ErrorCode.NOT_FOUND, `${what} not found`);
export const forbidden = (why: string): ApiError => new ApiError(ErrorCode.FORBIDDEN, why);
export const invalid = (message: string, details?: unknown): ApiError =>
  new ApiError(ErrorCode.VALIDATION_ERROR, message, details);
/** 429 with `Retry-After` in whole seconds, at least 1 (RFC 9110 allows no fractions). */
export const rateLimited = (message: string, retryAfterMs: number): ApiError =>
  new ApiError(ErrorCode.RATE_LIMITED, message, undefined, {
    'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))),
  });
