import { MongoServerError } from 'mongodb';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pino from 'pino';
import { createMetrics } from '../ops/metrics';
import { ApiError, ErrorCode, UnavailableError, UnavailableReason } from './errors';
import { errorHandler, toApiError } from './error-handler';

describe('toApiError', () => {
  it('keeps an ApiError as it is', () => {
    const error = new ApiError(ErrorCode.CONFLICT, 'taken');
    expect(toApiError(error)).toBe(error);
  });

  it('answers a busy store with 503 and Retry-After', () => {
    const busy = new MongoServerError({ message: 'database is locked (5) (SQLITE_BUSY)', code: 1 });
    const mapped = toApiError(busy);
    expect({ status: mapped.status, code: mapped.code, headers: mapped.headers }).toEqual({
      status: 503,
      code: 'UNAVAILABLE',
      headers: { 'Retry-After': '1' },
    });
  });

  it('asks the mappers passed in, in order, before answering 500', () => {
    const mapped = new ApiError(ErrorCode.CONFLICT, 'mapped');
    const thrown = new Error('from a server');
    expect(toApiError(thrown, [() => undefined, (error) => (error === thrown ? mapped : undefined)])).toBe(mapped);
    expect(toApiError(new Error('other'), [() => undefined]).status).toBe(500);
  });

  it('hides an unexpected error behind 500 INTERNAL', () => {
    const mapped = toApiError(new TypeError('x is undefined'));
    expect(mapped.toBody()).toEqual({ error: { code: 'INTERNAL', message: 'Internal error' } });
  });
});

/** Runs `use` while `app` listens on a loopback port. */
async function whileServing(app: Koa, use: (port: number) => Promise<void>): Promise<void> {
  const handle = app.callback();
  const server = http.createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await use((server.address() as AddressInfo).port);
  } finally {
    server.close();
  }
}

describe('errorHandler', () => {
  it('counts each 503 by its reason, and no other answer', async () => {
    const metrics = createMetrics();
    const app = new Koa();
    app.silent = true;
    app.use(errorHandler(pino({ level: 'silent' }), metrics.unavailable));
    const failures: Record<string, () => never> = {
      '/busy': () => {
        throw new MongoServerError({ message: 'database is locked (5) (SQLITE_BUSY)', code: 1 });
      },
      '/pending': () => {
        throw new UnavailableError(UnavailableReason.CANCELLATION_PENDING, 'later');
      },
      '/conflict': () => {
        throw new ApiError(ErrorCode.CONFLICT, 'taken');
      },
    };
    app.use((ctx) => failures[ctx.path]());
    await whileServing(app, async (port) => {
      for (const path of ['/busy', '/busy', '/pending', '/conflict']) {
        const response = await fetch(`http://127.0.0.1:${port}${path}`);
        expect(response.status).toBe(path === '/conflict' ? 409 : 503);
      }
    });
    const counted = (await metrics.unavailable.get()).values.map(({ labels, value }) => [labels.reason, value]);
    expect(counted.sort()).toEqual([
      ['cancellation_pending', 1],
      ['database_busy', 2],
    ]);
  });

  it('challenges every 401 with the challenge passed in, but one whose error names its own', async () => {
    const app = new Koa();
    app.silent = true;
    app.use(
      errorHandler(pino({ level: 'silent' }), createMetrics().unavailable, {
        challenge: (ctx) => `Bearer resource_metadata="http://service.test/meta${ctx.path}"`,
      }),
    );
    const failures: Record<string, () => never> = {
      '/plain': () => {
        throw new ApiError(ErrorCode.UNAUTHENTICATED, 'no credential');
      },
      '/own': () => {
        throw new ApiError(ErrorCode.UNAUTHENTICATED, 'no token', undefined, { 'WWW-Authenticate': 'Bearer' });
      },
      '/forbidden': () => {
        throw new ApiError(ErrorCode.FORBIDDEN, 'not yours');
      },
    };
    app.use((ctx) => failures[ctx.path]());
    await whileServing(app, async (port) => {
      const challenges: Record<string, [number, string | null]> = {};
      for (const path of Object.keys(failures)) {
        const response = await fetch(`http://127.0.0.1:${port}${path}`);
        challenges[path] = [response.status, response.headers.get('www-authenticate')];
      }
      expect(challenges).toEqual({
        '/plain': [401, 'Bearer resource_metadata="http://service.test/meta/plain"'],
        '/own': [401, 'Bearer'],
        '/forbidden': [403, null],
      });
    });
  });
});
