import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type Router from '@koa/router';
import { errorHandler } from '../http/error-handler';
import { closeServer, listen } from '../http/listen';
import type { Logger } from '../ops/logger';
import type { Metrics } from '../ops/metrics';

/**
 * GET /metrics, /healthz and /readyz of a process that serves no API (`npm run worker`), on its own
 * port: its agent calls, callbacks and Temporal worker are measured there. Resolves with its URL.
 */
export async function serveOps(
  opsRouter: Router,
  { host, port }: { host: string; port: number },
  deps: { logger: Logger; metrics: Metrics },
): Promise<{ url: string; close(): Promise<void> }> {
  const app = new Koa();
  app.silent = true;
  app.use(errorHandler(deps.logger, deps.metrics.unavailable));
  app.use(opsRouter.routes());
  const handle = app.callback();
  const server = http.createServer((request, response) => void handle(request, response));
  await listen(server, port, host);
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    close: () => closeServer(server),
  };
}
