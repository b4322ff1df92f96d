import type { Context, Next } from 'koa';
import type { Logger } from '../ops/logger';
import { isStoreBusy, isStoreUnavailable } from '../store/mongo';
import { ApiError, ErrorCode } from './errors';
import { isTemporalUnavailable } from '../router/temporal-client';

/**
 * Turns anything thrown below into the contract's error body. Known outages become 503; anything
 * unexpected is logged with its stack and answered 500 without internals.
 */
export function errorHandler(logger: Logger) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ApiError(ErrorCode.NOT_FOUND, `No route for ${ctx.method} ${ctx.path}`);
      }
    } catch (thrown) {
      const error = toApiError(thrown);
      if (error.status >= 500) {
        logger.error({ err: thrown, method: ctx.method, path: ctx.path }, 'request failed');
      }
      ctx.status = error.status;
      ctx.set(error.headers);
      ctx.body = error.toBody();
    }
  };
}

export function toApiError(thrown: unknown): ApiError {
  if (thrown instanceof ApiError) return thrown;
  if (isStoreUnavailable(thrown)) return new ApiError(ErrorCode.UNAVAILABLE, 'MongoDB is unreachable');
  if (isStoreBusy(thrown)) return new ApiError(ErrorCode.UNAVAILABLE, 'The database is busy; try again', undefined, { 'Retry-After': '1' });
  if (isTemporalUnavailable(thrown)) return new ApiError(ErrorCode.UNAVAILABLE, 'Temporal is unreachable');
  const status = (thrown as { status?: number }).status;
  // Errors raised by Koa itself (for instance ctx.throw or @koa/router's 405) carry a status.
  if (status === 405) return new ApiError(ErrorCode.METHOD_NOT_ALLOWED, 'Method not allowed');
  if (status !== undefined && status >= 400 && status < 500) {
    return new ApiError(ErrorCode.VALIDATION_ERROR, (thrown as Error).message);
  }
  return new ApiError(ErrorCode.INTERNAL, 'Internal error');
}
