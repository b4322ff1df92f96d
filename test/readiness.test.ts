import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/config/config';
import { mongoUriFor } from '../src/embedded/ferretdb';
import { startServiceFerretDb } from './support/ferretdb';
import { type ManagedProcess } from '../src/embedded/managed-process';
import { freePort } from '../src/util/ports';
import { createLogger } from '../src/ops/logger';
import { startService, type RunningService } from '../src/service';
import { call } from './support/http';
import { scrape, valueOf } from './support/prometheus';
import { serviceEnv } from './support/global-setup';
import { testStack } from './support/test-stack';
import { STUCK_AFTER_MS } from './support/until';

/** Polls /readyz until it answers `status`, for at most `timeoutMs`; returns the last reply. */
async function readyzUntil(baseUrl: string, status: number, timeoutMs = STUCK_AFTER_MS) {
  const deadline = Date.now() + timeoutMs;
  let reply = await call('GET', '/readyz', { baseUrl });
  while (reply.status !== status && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    reply = await call('GET', '/readyz', { baseUrl });
  }
  return reply;
}

describe('/readyz follows MongoDB', () => {
  const stack = testStack();
  const dataDir = fs.mkdtempSync(path.join(stack.runDir, 'readiness-'));
  let ferretDb: ManagedProcess;
  let port: number;
  let service: RunningService;

  beforeAll(async () => {
    port = await freePort();
    ferretDb = await startServiceFerretDb({
      binary: stack.binaries.ferretdb,
      dataDir,
      port,
      database: stack.mongoDatabase,
    });
    const config = loadConfig(serviceEnv(stack, { PORT: '0', MONGODB_URI: mongoUriFor(port), LOG_LEVEL: 'silent' }));
    service = await startService(
      config,
      { temporalAddress: stack.temporalAddress, mongoUri: mongoUriFor(port) },
      createLogger(config),
      { api: true, worker: false },
    );
  });
  afterAll(async () => {
    await service.stop();
    await ferretDb.stop();
  });

  it('goes 503 naming MongoDB while FerretDB is down, and back to 200 when it returns', async () => {
    const baseUrl = service.url!;
    expect((await call('GET', '/readyz', { baseUrl })).status).toBe(200);

    await ferretDb.stop();
    const down = await readyzUntil(baseUrl, 503);
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe('UNAVAILABLE');
    expect(down.body.error.message).toContain('mongodb');
    expect(down.body.error.message).not.toContain('temporal');
    expect((await call('GET', '/healthz', { baseUrl })).status).toBe(200);
    expect(valueOf((await scrape(baseUrl)).samples, 'acs_unavailable_responses_total', { reason: 'not_ready' })).toBe(
      1,
    );

    ferretDb = await startServiceFerretDb({
      binary: stack.binaries.ferretdb,
      dataDir,
      port,
      database: stack.mongoDatabase,
    });
    const back = await readyzUntil(baseUrl, 200);
    expect(back.body).toEqual({ status: 'ready', checks: { mongodb: 'ok', temporal: 'ok' } });
  });
});
