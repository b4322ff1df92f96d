import { createHash, timingSafeEqual } from 'node:crypto';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { DocumentedRouter, routeTable } from '../http/route-module';
import type { Metrics } from '../ops/metrics';
import type { TemporalMetrics } from '../ops/temporal-metrics';
import { ApiError, ErrorCode, UnavailableError, UnavailableReason } from '../http/errors';

/** A dependency the service needs to do useful work; `/readyz` asks each one. */
export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

const CHECK_TIMEOUT_MS = 2_000;

/** Compared as SHA-256 digests: equal lengths for timingSafeEqual, and no time that depends on how much of the token matched. */
const digestOf = (token: string) => createHash('sha256').update(token).digest();

/**
 * With METRICS_TOKEN set, GET /metrics needs `Authorization: Bearer <token>`: the metrics tell
 * routes, traffic and error counts, which a service reachable by others need not show everyone.
 * Unset, the route is open, for a Prometheus on a private network.
 */
function requireMetricsToken(token: string | undefined): (ctx: Context) => void {
  if (token === undefined) return () => undefined;
  const expected = digestOf(token);
  return (ctx) => {
    const match = /^Bearer (.+)$/.exec(ctx.get('Authorization'));
    if (match && timingSafeEqual(digestOf(match[1]), expected)) return;
    throw new ApiError(
      ErrorCode.UNAUTHENTICATED,
      'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>',
      undefined,
      { 'WWW-Authenticate': 'Bearer' },
    );
  };
}

/** The routes every process serves without a credential, before authentication. */
export const OPS_ROUTES = routeTable({
  versioned: false,
  operations: {
    'GET /healthz': { summary: 'The process answers', credential: 'none', success: [200, 'Alive'] },
    'GET /readyz': {
      summary: 'MongoDB and Temporal answer (503 naming what is down)',
      credential: 'none',
      success: [200, 'Ready'],
    },
    'GET /metrics': {
      summary: 'Prometheus metrics; with METRICS_TOKEN set, only for Authorization: Bearer <METRICS_TOKEN> (else 401)',
      credential: 'none',
      success: [200, 'Metrics in the Prometheus text format'],
    },
    'GET /openapi.json': { summary: 'This document', credential: 'none', success: [200, 'OpenAPI 3.1 document'] },
  },
});

export interface OpsRoutesOptions {
  /** The API's OpenAPI document, served as it is. */
  document: object;
  metricsToken?: string;
  temporalMetrics?: TemporalMetrics;
}

/** GET /healthz (the process answers), GET /readyz (every dependency answers), GET /metrics, GET /openapi.json. */
export function createOpsRoutes(checks: ReadinessCheck[], metrics: Metrics, options: OpsRoutesOptions): Router {
  const checkMetricsToken = requireMetricsToken(options.metricsToken);
  const router = new DocumentedRouter(OPS_ROUTES);
  router.serve('GET /healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.serve('GET /readyz', async (ctx) => {
    const results = await Promise.all(
      checks.map(async ({ name, check }) => ({ name, problem: await failureOf(check) })),
    );
    const down = results.filter((result) => result.problem !== undefined);
    if (down.length > 0) {
      throw new UnavailableError(
        UnavailableReason.NOT_READY,
        `Not ready: ${down.map((result) => result.name).join(', ')} unreachable`,
        Object.fromEntries(down.map((result) => [result.name, result.problem])),
      );
    }
    ctx.body = { status: 'ready', checks: Object.fromEntries(results.map((result) => [result.name, 'ok'])) };
  });
  router.serve('GET /openapi.json', (ctx) => {
    ctx.body = options.document;
  });
  router.serve('GET /metrics', async (ctx) => {
    checkMetricsToken(ctx);
    ctx.type = metrics.registry.contentType;
    const [own, temporal] = await Promise.all([metrics.registry.metrics(), options.temporalMetrics?.text()]);
    ctx.body = temporal === undefined ? own : `${own}\n${temporal}`;
  });
  return router.module().router;
}

async function failureOf(check: () => Promise<void>): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    clearTimeout(timer);
  }
}
