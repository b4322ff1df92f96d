import type { ServiceProcess } from './support/service-process';
import { startSecondApi } from './support/second-api';
import { call, closePoolsFrom, expectError, type Reply } from './support/http';

/**
 * An API process behind one trusted proxy: the client is the address the proxy appended to
 * X-Forwarded-For. All requests come from one loopback address, as they would from a load balancer.
 */
const LIMIT = 3;
const PROXY = '127.0.0.40';

let second: ServiceProcess;
let baseUrl: string;

beforeAll(async () => {
  let port: number;
  ({ process: second, port } = await startSecondApi('trusted-proxies', {
    TRUSTED_PROXIES: '1',
    RATE_LIMIT_WINDOW_MS: '60000',
    RATE_LIMIT_ANONYMOUS_REQUESTS: String(LIMIT),
  }));
  baseUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await closePoolsFrom();
  await second?.stop();
});

const listRoomsFor = (forwardedFor: string): Promise<Reply> =>
  call('GET', '/rooms', { baseUrl, localAddress: PROXY, headers: { 'x-forwarded-for': forwardedFor } });

describe('TRUSTED_PROXIES=1', () => {
  it('counts the clients the proxy names apart, and believes only the entry the proxy appended', async () => {
    for (let index = 0; index < LIMIT; index++) expect((await listRoomsFor('10.0.0.1')).status).toBe(200);
    expectError(await listRoomsFor('10.0.0.1'), 429, 'RATE_LIMITED');
    // What the client wrote before the proxy's entry is not believed: this is 10.0.0.1 again.
    expectError(await listRoomsFor('10.0.0.2, 10.0.0.1'), 429, 'RATE_LIMITED');
    // Another client behind the same proxy has a budget of its own.
    expect((await listRoomsFor('10.0.0.1, 10.0.0.2')).status).toBe(200);
  });
});
