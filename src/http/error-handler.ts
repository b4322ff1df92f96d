import type { Counter } from 'prom-client';
import type { Context, Next } from 'koa';
import type { Logger } from '../ops/logger';
import { isStoreBusy, isStoreUnavailable } from '../store/mongo';
import { ApiError, ErrorCode, UnavailableError, UnavailableReason } from './errors';
import { temporalOutage } from '../tasks/temporal-client';

/**
 * Turns anything thrown below into the contract's error body. Known outages become 503; anything
 * unexpected is logged with its stack and answered 500 without internals.
 */
export function errorHandler(logger: Logger, unavailable: Counter) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.body === undefined) throwForUnanswered(ctx);
    } catch (thrown) {
      const error = toApiError(thrown);
      if (error.status >= 500) {
        logger.error({ err: thrown, method: ctx.method, path: ctx.path }, 'request failed');
      }
      if (error instanceof UnavailableError) unavailable.inc({ reason: error.reason });
      ctx.status = error.status;
      ctx.set(error.headers);
      ctx.body = error.toBody();
    }
  };
}

/**
 * What @koa/router leaves without a body: no route (404), or a route without this method (405, with
 * Allow), or a method no route knows (501, which the contract's "bad input is never 5xx" makes a 405).
 */
function throwForUnanswered(ctx: Context): void {
  const allowed = ctx.response.get('Allow');
  if (ctx.status === 404 || (ctx.status === 501 && !allowed))
    throw new ApiError(ErrorCode.NOT_FOUND, `No route for ${ctx.method} ${ctx.path}`);
  if (ctx.status === 405 || ctx.status === 501) {
    throw new ApiError(
      ErrorCode.METHOD_NOT_ALLOWED,
      `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allowed}`,
      undefined,
      { Allow: allowed },
    );
  }
}

export function toApiError(thrown: unknown): ApiError {
  if (thrown instanceof ApiError) return thrown;
  if (isStoreUnavailable(thrown)) return new UnavailableError(UnavailableReason.MONGODB, 'MongoDB is unreachable');
  if (isStoreBusy(thrown)) {
    return new UnavailableError(UnavailableReason.DATABASE_BUSY, 'The database is busy; try again', undefined, {
      'Retry-After': '1',
    });
  }
  const outage = temporalOutage(thrown);
  if (outage) {
    return new UnavailableError(UnavailableReason.TEMPORAL, `Temporal ${outage}; try again`, undefined, {
      'Retry-After': '1',
    });
  }
  const status = (thrown as { status?: number }).status;
  // Errors of Koa or a library made with http-errors carry an HTTP status.
  if (status !== undefined && status >= 400 && status < 500) {
    return new ApiError(ErrorCode.VALIDATION_ERROR, (thrown as Error).message);
  }
  return new ApiError(ErrorCode.INTERNAL, 'Internal error');
}
