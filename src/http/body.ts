import type { Context, Next } from 'koa';
import { ApiError, ErrorCode } from './errors';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body; unknown until a route validates it. */
    body?: unknown;
  }
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Reads a JSON request body into `ctx.request.body`, refusing more than `maxBytes` (413) before
 * buffering it, malformed or too deeply nested JSON (400) and non-JSON media types (415). A missing
 * body reads as undefined.
 */
export function jsonBody(maxBytes: number) {
  return async function readJsonBody(ctx: Context, next: Next): Promise<void> {
    if (!METHODS_WITH_BODY.has(ctx.method)) return next();
    const declaredLength = Number(ctx.get('content-length') || 0);
    if (declaredLength > maxBytes) throw tooLarge(maxBytes);

    const mediaType = ctx.get('content-type').split(';')[0].trim().toLowerCase();
    const raw = await readLimited(ctx, maxBytes);
    if (raw.length === 0) return next();
    if (mediaType !== '' && mediaType !== 'application/json' && !mediaType.endsWith('+json')) {
      throw new ApiError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'Request bodies must be JSON (Content-Type: application/json)');
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch (error) {
      throw new ApiError(ErrorCode.VALIDATION_ERROR, `Malformed JSON body: ${(error as Error).message}`);
    }
    if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
      throw new ApiError(ErrorCode.VALIDATION_ERROR, `JSON body nests deeper than ${MAX_JSON_DEPTH} levels`);
    }
    ctx.request.body = body;
    return next();
  };
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(ErrorCode.PAYLOAD_TOO_LARGE, `Request body exceeds ${maxBytes} bytes`);
}

async function readLimited(ctx: Context, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of ctx.req) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) {
      // Stop reading; the connection is closed after the 413 so the client stops sending.
      ctx.req.unpipe();
      ctx.set('Connection', 'close');
      throw tooLarge(maxBytes);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
