import type { Counter } from 'prom-client';
import type { Context, Next } from 'koa';
import type { Logger } from '../ops/logger';
import { isStoreBusy, isStoreUnavailable } from '../store/mongo';
import { ApiError, ErrorCode, UnavailableError, UnavailableReason } from './errors';

/**
 * Names what a part of the service throws as the contract's error (an outage of a server it talks
 * to, say), or leaves it to the next mapper with undefined. The parts that own a server pass theirs
 * in, so that this kit knows none of them.
 */
export type ErrorMapper = (thrown: unknown) => ApiError | undefined;

/**
 * The answer to an error in a protocol of its own (A2A's JSON-RPC, say) for the requests a part
 * claims, or undefined for the contract's body. The error's headers (`Retry-After`) go with either.
 */
export type ErrorPresenter = (ctx: Context, error: ApiError) => { status: number; body: unknown } | undefined;

/**
 * The `WWW-Authenticate` challenge of a 401 to the request in `ctx` (RFC 9110 §11.6.1): where the
 * caller learns how to get a credential.
 */
export type AuthenticationChallenge = (ctx: Context) => string;

export interface ErrorHandling {
  /** How the parts below name their failures as the contract's errors (an outage of Temporal, say). */
  mappers?: readonly ErrorMapper[];
  presenters?: readonly ErrorPresenter[];
  /** The challenge of every 401 whose error names none of its own. */
  challenge?: AuthenticationChallenge;
}

/**
 * Turns anything thrown below into the contract's error body, or a presenter's answer. Known
 * outages become 503; anything unexpected is logged with its stack and answered 500 without internals.
 */
export function errorHandler(
  logger: Logger,
  unavailable: Counter,
  { mappers = [], presenters = [], challenge }: ErrorHandling = {},
) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.body === undefined) throwForUnanswered(ctx);
    } catch (thrown) {
      const error = toApiError(thrown, mappers);
      if (error.status >= 500) {
        logger.error({ err: thrown, method: ctx.method, path: ctx.path }, 'request failed');
      }
      if (error instanceof UnavailableError) unavailable.inc({ reason: error.reason });
      const presented = presenters.map((present) => present(ctx, error)).find((answer) => answer !== undefined);
      ctx.status = presented?.status ?? error.status;
      ctx.set(error.headers);
      if (ctx.status === 401 && challenge && error.headers['WWW-Authenticate'] === undefined) {
        ctx.set('WWW-Authenticate', challenge(ctx));
      }
      ctx.body = presented ? presented.body : error.toBody();
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

/** The contract's error for `thrown`: its own, a mapper's, a store outage's, a 4xx of Koa's, else 500. */
export function toApiError(thrown: unknown, mappers: readonly ErrorMapper[] = []): ApiError {
  if (thrown instanceof ApiError) return thrown;
  for (const mapper of mappers) {
    const mapped = mapper(thrown);
    if (mapped) return mapped;
  }
  if (isStoreUnavailable(thrown)) return new UnavailableError(UnavailableReason.MONGODB, 'MongoDB is unreachable');
  if (isStoreBusy(thrown)) {
    return new UnavailableError(UnavailableReason.DATABASE_BUSY, 'The database is busy; try again', undefined, {
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
