import type { ServiceProcess } from './support/service-process';
import { startSecondApi } from './support/second-api';
import { call, expectError } from './support/http';

/** A second API process with METRICS_TOKEN set; the test stack's own API runs without it. */
const METRICS_TOKEN = 'metrics-token-for-the-tests-0123456789';

let second: ServiceProcess;
let baseUrl: string;

beforeAll(async () => {
  let port: number;
  ({ process: second, port } = await startSecondApi('metrics-token', { METRICS_TOKEN }));
  baseUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await second?.stop();
});

describe('GET /metrics with METRICS_TOKEN', () => {
  it('answers 401 UNAUTHENTICATED without the token, with another one, or with an API key', async () => {
    const refused: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer not-the-token' },
      { authorization: METRICS_TOKEN },
      { authorization: `Basic ${METRICS_TOKEN}` },
    ];
    for (const headers of refused) {
      const reply = await call('GET', '/metrics', { baseUrl, headers });
      expectError(reply, 401, 'UNAUTHENTICATED');
      expect(reply.headers.get('www-authenticate')).toBe('Bearer');
    }
    expectError(await call('GET', '/metrics', { baseUrl, apiKey: 'admin' }), 401, 'UNAUTHENTICATED');
  });

  it('serves the metrics to `Authorization: Bearer <token>`', async () => {
    const reply = await call('GET', '/metrics', { baseUrl, headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(reply.status).toBe(200);
    expect(reply.body).toContain('http_request_duration_seconds_bucket');
  });

  it('leaves the other ops routes open', async () => {
    expect((await call('GET', '/healthz', { baseUrl })).status).toBe(200);
  });

  it('serves them to anyone where METRICS_TOKEN is not set', async () => {
    expect((await call('GET', '/metrics')).status).toBe(200);
  });
});
