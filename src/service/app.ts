import { randomUUID } from 'node:crypto';
import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import type { Authenticator } from '../auth/authenticate';
import { isMcpPath, resourceChallenge } from '../auth/protected-resource';
import type { ClientAddress } from '../limits/limit-keys';
import type { Limits } from '../limits/limits';
import { limitRequests } from './request-limits';
import type { Logger } from '../ops/logger';
import type { Metrics } from '../ops/metrics';
import { setAnswerHeaders } from '../http/answer-headers';
import { jsonBody } from '../http/body';
import { errorHandler, type ErrorMapper } from '../http/error-handler';
import type { RouteModule } from '../http/route-module';

export interface AppDeps {
  logger: Logger;
  metrics: Metrics;
  maxBodyBytes: number;
  authenticator: Authenticator;
  limits: Pick<Limits, 'writesPerPrincipal' | 'readsPerPrincipal' | 'anonymousPerAddress' | 'clientAddress'>;
  /** Routes that need no credential and run before authentication (health, metrics). */
  opsRouter: Router;
  /** The web app's files (/app/): no credential, before authentication, as the ops routes. */
  webAppRouter: Router;
  modules: RouteModule[];
  /** How the parts below name their failures as the contract's errors (an outage of Temporal, say). */
  errorMappers: readonly ErrorMapper[];
}

export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  app.use(setAnswerHeaders);
  app.use(requestLog(deps.logger, deps.metrics, deps.limits.clientAddress));
  const presenters = deps.modules.flatMap((module) => (module.presentErrors ? [module.presentErrors] : []));
  app.use(
    errorHandler(deps.logger, deps.metrics.unavailable, {
      mappers: deps.errorMappers,
      presenters,
      challenge: resourceChallenge,
    }),
  );
  app.use(deps.opsRouter.routes());
  app.use(deps.webAppRouter.routes()).use(deps.webAppRouter.allowedMethods());
  app.use(jsonBody(deps.maxBodyBytes));
  const [ownCredentials, authenticated] = [true, false].map((own) =>
    deps.modules.filter((module) => (module.authenticatesItself ?? false) === own),
  );
  for (const module of ownCredentials) app.use(module.router.routes()).use(module.router.allowedMethods());
  app.use(deps.authenticator.middleware(deps.limits.clientAddress, { singleBearer: isMcpPath }));
  app.use(limitRequests(deps.limits));

  for (const module of authenticated) {
    app.use(module.router.routes()).use(module.router.allowedMethods());
    if (module.versioned) {
      const v1 = new Router({ prefix: '/v1' });
      v1.use(module.router.routes());
      app.use(v1.routes()).use(v1.allowedMethods());
    }
  }
  return app;
}

/** One log line and one histogram sample per request, with a request id echoed to the caller. */
function requestLog(logger: Logger, metrics: Metrics, clientAddress: ClientAddress) {
  return async function logRequest(ctx: Context, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    const requestId = ctx.get('x-request-id') || randomUUID();
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics.httpRequests.observe({ method: ctx.method, route: String(route), status: String(ctx.status) }, seconds);
      logger.debug(
        {
          requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(seconds * 1000),
          address: clientAddress(ctx.req),
        },
        'request',
      );
    }
  };
}
