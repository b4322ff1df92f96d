import type { Context, Next } from 'koa';
import { ApiError, ErrorCode } from './errors';
import { MAX_JSON_DEPTH, jsonTextNestsDeeperThan } from './json-depth';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body; unknown until a route validates it. */
    body?: unknown;
  }
}

/**
 * A 400 for a body that is not JSON the service parses (malformed, or nested too deeply): a
 * VALIDATION_ERROR like any other, told apart for protocols that name it themselves (JSON-RPC's
 * Parse error).
 */
export class UnparsedBodyError extends ApiError {
  constructor(message: string) {
    super(ErrorCode.VALIDATION_ERROR, message);
  }
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);
/**
 * How much of a refused body is still read, in multiples of the limit, before the 413 goes out. A
 * connection closed with bytes unread is reset, and a client still sending then sees a broken pipe
 * instead of the answer; past this much the connection is closed anyway.
 */
const DRAINED_MULTIPLE = 4;

/**
 * Reads a JSON request body into `ctx.request.body`, refusing more than `maxBytes` (413) before
 * buffering it, malformed or too deeply nested JSON (400) and non-JSON media types (415). A missing
 * body reads as undefined.
 */
export function jsonBody(maxBytes: number) {
  return async function readJsonBody(ctx: Context, next: Next): Promise<void> {
    if (!METHODS_WITH_BODY.has(ctx.method)) {
      await next();
      return;
    }
    const declaredLength = Number(ctx.get('content-length') || 0);
    if (declaredLength > maxBytes) return refuseTooLarge(ctx, maxBytes, declaredLength <= maxBytes * DRAINED_MULTIPLE);

    const mediaType = ctx.get('content-type').split(';')[0].trim().toLowerCase();
    const raw = await readLimited(ctx, maxBytes);
    if (raw.length === 0) {
      await next();
      return;
    }
    if (mediaType !== '' && mediaType !== 'application/json' && !mediaType.endsWith('+json')) {
      throw new ApiError(
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        'Request bodies must be JSON (Content-Type: application/json)',
      );
    }
    const text = raw.toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      throw new UnparsedBodyError(`Malformed JSON body: ${(error as Error).message}`);
    }
    if (jsonTextNestsDeeperThan(text, MAX_JSON_DEPTH)) {
      throw new UnparsedBodyError(`JSON body nests deeper than ${MAX_JSON_DEPTH} levels`);
    }
    ctx.request.body = body;
    await next();
  };
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(ErrorCode.PAYLOAD_TOO_LARGE, `Request body exceeds ${maxBytes} bytes`);
}

async function readLimited(ctx: Context, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  // Leaving the loop early must not destroy the request: the rest is still to be dropped.
  for await (const chunk of ctx.req.iterator({ destroyOnReturn: false })) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) break;
    chunks.push(chunk as Buffer);
  }
  if (total > maxBytes) return refuseTooLarge(ctx, maxBytes, true);
  return Buffer.concat(chunks);
}

/** 413, once the rest of the body is read and dropped when `drain` and it is not too much; otherwise the connection closes after the answer. */
async function refuseTooLarge(ctx: Context, maxBytes: number, drain: boolean): Promise<never> {
  if (!drain || !(await dropRest(ctx, maxBytes * DRAINED_MULTIPLE))) ctx.set('Connection', 'close');
  throw tooLarge(maxBytes);
}

/** Reads what is left of the request and drops it; false when more than `limit` bytes came. */
async function dropRest(ctx: Context, limit: number): Promise<boolean> {
  let dropped = 0;
  for await (const chunk of ctx.req) {
    dropped += (chunk as Buffer).length;
    if (dropped > limit) return false;
  }
  return true;
}
