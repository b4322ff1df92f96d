import Router from '@koa/router';
import { openApiDocument } from '../http/openapi';
import type { Metrics } from './metrics';
import { ApiError, ErrorCode } from '../http/errors';

/** A dependency the service needs to do useful work; `/readyz` asks each one. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

const CHECK_TIMEOUT_MS = 2_000;

/** GET /healthz (the process answers), GET /readyz (every dependency answers), GET /metrics, GET /openapi.json. */
export function createOpsRoutes(checks: ReadinessCheck[], metrics: Metrics): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const results = await Promise.all(checks.map(async ({ name, check }) => ({ name, problem: await failureOf(check) })));
    const down = results.filter((result) => result.problem !== undefined);
    if (down.length > 0) {
      throw new ApiError(
        ErrorCode.UNAVAILABLE,
        `Not ready: ${down.map((result) => result.name).join(', ')} unreachable`,
        Object.fromEntries(down.map((result) => [result.name, result.problem])),
      );
    }
    ctx.body = { status: 'ready', checks: Object.fromEntries(results.map((result) => [result.name, 'ok'])) };
  });
  const document = openApiDocument();
  router.get('/openapi.json', (ctx) => {
    ctx.body = document;
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  return router;
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
