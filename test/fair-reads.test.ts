import { registerAgent } from './support/agents';
import { startSecondApi } from './support/second-api';
import { call, expectError, type CallOptions, type Reply } from './support/http';
import { humanHeaders, newUserId } from './support/humans';
import { refusedHandshake, RoomClient } from './support/room-client';

/**
 * Reads have a budget per credential (RATE_LIMIT_READS), on a second API process of their own with a
 * small one: one caller's list loop is refused once over it, while another caller's lookups go on.
 * The window is long enough that no budget renews during a test.
 */
const READS = 20;
const WINDOW_MS = 10 * 60_000;
const LOOPS = 8;

let second: Awaited<ReturnType<typeof startSecondApi>> | undefined;

beforeAll(async () => {
  second = await startSecondApi('fair-reads', {
    RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
    RATE_LIMIT_READS: String(READS),
  });
});

afterAll(() => second?.process.stop());

const started = () => {
  if (!second) throw new Error('the second API process is only there inside tests');
  return second;
};

const on = (method: string, path: string, options: CallOptions = {}): Promise<Reply> =>
  call(method, path, { baseUrl: `http://127.0.0.1:${started().port}`, ...options });

async function newServiceKey(apiKey = 'admin'): Promise<string> {
  const reply = await on('POST', '/keys', { apiKey, body: {} });
  expect(reply.status).toBe(201);
  return reply.body.apiKey ?? reply.body.key;
}

/** 429 RATE_LIMITED naming the reads, with a Retry-After of whole seconds within the window. */
function expectReadsRefused(reply: Reply): void {
  expect(expectError(reply, 429, 'RATE_LIMITED').message).toContain('reads by this credential');
  expect(reply.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
  expect(Number(reply.headers.get('retry-after'))).toBeLessThanOrEqual(WINDOW_MS / 1000);
}

describe('reads per credential', () => {
  it("refuses one caller's list loop once over its budget while another caller's lookups answer 200", async () => {
    const agent = await registerAgent({ name: 'Looked up' });
    const [looper, other] = [await newServiceKey(), await newServiceKey()];
    const lookUp = async () => {
      const reply = await on('GET', `/agents/${agent.agentId}`, { apiKey: other });
      expect({ status: reply.status, agentId: reply.body.agentId }).toEqual({ status: 200, agentId: agent.agentId });
    };
    const statuses: number[] = [];
    await Promise.all([
      ...Array.from({ length: LOOPS }, async () => {
        // Each loop runs until it is refused: the budget is spent READS pages in, whatever the order.
        while (statuses.length < READS * 3) {
          const reply = await on('GET', '/agents?limit=200', { apiKey: looper });
          statuses.push(reply.status);
          if (reply.status === 200) {
            expect(Array.isArray(reply.body)).toBe(true);
            continue;
          }
          expectReadsRefused(reply);
          return;
        }
      }),
      (async () => {
        for (let lookup = 0; lookup < READS / 2; lookup += 1) await lookUp();
      })(),
    ]);
    expect(statuses.filter((status) => status === 200)).toHaveLength(READS);
    expect(statuses.filter((status) => status === 429)).toHaveLength(LOOPS);

    // Every read of the looper is refused now, a lookup too; its writes have a budget of their own.
    expectReadsRefused(await on('GET', `/agents/${agent.agentId}`, { apiKey: looper }));
    expect((await on('POST', '/rooms', { apiKey: looper, body: { name: 'Still writes' } })).status).toBe(201);
    await lookUp();
  });

  it('counts the reads of keys a service key mints against their creator, and does not limit the admin', async () => {
    const tenant = await newServiceKey();
    const child = await newServiceKey(tenant);
    for (let read = 0; read < READS; read += 1)
      expect((await on('GET', '/agents?limit=1', { apiKey: read % 2 === 0 ? tenant : child })).status).toBe(200);
    expectReadsRefused(await on('GET', '/agents?limit=1', { apiKey: child }));
    expectReadsRefused(await on('GET', '/agents?limit=1', { apiKey: tenant }));
    for (let read = 0; read <= READS; read += 1)
      expect((await on('GET', '/agents?limit=1', { apiKey: 'admin' })).status).toBe(200);
  });

  it('counts a WebSocket handshake as one read, however long the socket stays open', async () => {
    const room = await on('POST', '/rooms', { apiKey: 'admin', body: { name: 'Fair reads' } });
    expect(room.status).toBe(201);
    const human = newUserId();
    const headers = await humanHeaders(human);
    const client = await RoomClient.connect(room.body.roomId, { human }, { wsUrl: started().wsUrl });
    try {
      for (let read = 1; read < READS; read += 1)
        expect((await on('GET', `/rooms/${room.body.roomId}`, { headers })).status).toBe(200);
      expectReadsRefused(await on('GET', `/rooms/${room.body.roomId}`, { headers }));
      const refused = await refusedHandshake(room.body.roomId, { human }, { wsUrl: started().wsUrl });
      expect(refused).toMatchObject({
        status: 429,
        body: { error: { code: 'RATE_LIMITED', message: expect.stringContaining('reads by this credential') } },
      });
      expect(client.ws.readyState).toBe(client.ws.OPEN);
    } finally {
      await client.close();
    }
  });
});
