import fs from 'node:fs';
import net from 'node:net';
import { CAP_RETRY_AFTER_MS } from '../src/limits/concurrency-cap';
import type { ServiceProcess } from './support/service-process';
import { startSecondApi } from './support/second-api';
import { call, closePoolsFrom, expectError, type CallOptions, type Reply } from './support/http';
import { humanHeaders, newUserId } from './support/humans';
import { isError, isMessage, refusedHandshake, RoomClient, type SocketCredential } from './support/room-client';
import { STUCK_AFTER_MS, until } from './support/until';

/**
 * A second API process with small limits. Every limit counted per address gets loopback addresses
 * of its own (127.0.0.x all reach the service on Linux), so the tests do not count against each other.
 */
const WINDOW_MS = 3_000;
const LIMIT = 3;
const SOCKETS_PER_PRINCIPAL = 2;
const SOCKETS_PER_ADDRESS = 3;
const CONNECTIONS_PER_ADDRESS = 4;
/** How long a test sleeps for a window or a block to end: the window, and some more. */
const RESET_WAIT_MS = WINDOW_MS + 2_000;

let second: ServiceProcess;
let baseUrl: string;
let wsUrl: string;

beforeAll(async () => {
  let port: number;
  ({
    process: second,
    port,
    wsUrl,
  } = await startSecondApi('limits', {
    RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
    RATE_LIMIT_WRITES: String(LIMIT),
    RATE_LIMIT_ANONYMOUS_REQUESTS: String(LIMIT),
    RATE_LIMIT_AUTH_FAILURES: String(LIMIT),
    AUTH_FAILURE_BLOCK_MS: String(WINDOW_MS),
    WS_MAX_SOCKETS_PER_PRINCIPAL: String(SOCKETS_PER_PRINCIPAL),
    WS_MAX_SOCKETS_PER_ADDRESS: String(SOCKETS_PER_ADDRESS),
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(CONNECTIONS_PER_ADDRESS),
  }));
  baseUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await closePoolsFrom();
  await second?.stop();
});

const on = (method: string, path: string, options: CallOptions = {}): Promise<Reply> =>
  call(method, path, { baseUrl, ...options });

/** Asserts 429 RATE_LIMITED with a Retry-After of whole seconds within the window, and returns it in ms. */
function expectRateLimited(reply: Reply): number {
  expectError(reply, 429, 'RATE_LIMITED');
  const header = reply.headers.get('retry-after');
  expect(header).toMatch(/^[1-9][0-9]*$/);
  expect(Number(header)).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / 1000));
  return Number(header) * 1000;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function newServiceKey(): Promise<string> {
  const reply = await on('POST', '/keys', { apiKey: 'admin', body: {} });
  expect(reply.status).toBe(201);
  return reply.body.key;
}

async function newRoom(): Promise<string> {
  const reply = await on('POST', '/rooms', { apiKey: 'admin', body: { name: 'Limits', maxParticipants: 50 } });
  expect(reply.status).toBe(201);
  return reply.body.roomId;
}

const warningsFor = (limit: string, key: string): number =>
  fs
    .readFileSync(second.logFile, 'utf8')
    .split('\n')
    .filter(
      (line) => line.includes('"level":40') && line.includes(`"limit":"${limit}"`) && line.includes(`"key":"${key}"`),
    ).length;

describe('writes per principal', () => {
  it(`answers the write after ${LIMIT} in a window 429 with Retry-After, leaves other principals alone, and resets`, async () => {
    const [limited, other] = [await newServiceKey(), await newServiceKey()];
    const createRoom = (apiKey: string) => on('POST', '/rooms', { apiKey, body: { name: 'Busy' } });
    for (let index = 0; index < LIMIT; index++) expect((await createRoom(limited)).status).toBe(201);
    const refused = await createRoom(limited);
    const waitMs = expectRateLimited(refused);
    expect(refused.body.error.message).toContain('writes by this credential');
    // Reads of the limited principal, and writes of another one, go on.
    expect((await on('GET', '/agents', { apiKey: limited })).status).toBe(200);
    expect((await createRoom(other)).status).toBe(201);

    await sleep(Math.min(waitMs, RESET_WAIT_MS));
    expect(
      (
        await until(async () => {
          const reply = await createRoom(limited);
          return reply.status === 201 && reply;
        }, 'a write after the window')
      ).status,
    ).toBe(201);
  });

  it('counts the messages a socket sends: over the limit an ERROR frame RATE_LIMITED, the socket stays open, and HTTP writes share the count', async () => {
    const roomId = await newRoom();
    const human = newUserId();
    const client = await RoomClient.connect(roomId, { human }, { wsUrl, localAddress: '127.0.0.12' });
    try {
      for (let index = 0; index <= LIMIT; index++) client.sendMessage(`flood ${index}`);
      const refusal = await client.waitFor(isError);
      expect(refusal.data).toMatchObject({
        code: 'RATE_LIMITED',
        message: expect.stringContaining('writes by this credential'),
      });
      const stored = await client.waitForCount(isMessage(), LIMIT);
      expect(stored.map((frame) => frame.data.content)).toEqual(
        Array.from({ length: LIMIT }, (_, index) => `flood ${index}`),
      );
      expectRateLimited(
        await on('POST', `/rooms/${roomId}/messages`, {
          headers: await humanHeaders(human),
          body: { content: 'by HTTP' },
        }),
      );
      expect(client.ws.readyState).toBe(client.ws.OPEN);

      await sleep(RESET_WAIT_MS);
      client.sendMessage('after the window');
      expect((await client.waitFor(isMessage('after the window'))).data.sender).toEqual({ type: 'HUMAN', id: human });
    } finally {
      await client.close();
    }
  });

  it('counts the service keys a service key mints against their creator: the tenant has one budget', async () => {
    const tenant = await newServiceKey();
    const minted = await on('POST', '/keys', { apiKey: tenant, body: { description: 'child' } });
    expect(minted.status).toBe(201);
    const grandchild = await on('POST', '/keys', { apiKey: minted.body.apiKey, body: {} });
    expect(grandchild.status).toBe(201);
    // Two writes so far (the mints); one more by the child fills the tenant's budget.
    expect((await on('POST', '/rooms', { apiKey: minted.body.apiKey, body: { name: 'Child' } })).status).toBe(201);
    for (const apiKey of [tenant, minted.body.apiKey, grandchild.body.apiKey])
      expectRateLimited(await on('POST', '/rooms', { apiKey, body: { name: 'Over' } }));
    // A key the admin creates is a tenant of its own.
    expect((await on('POST', '/rooms', { apiKey: await newServiceKey(), body: { name: 'Other' } })).status).toBe(201);
  });

  it('counts the A2A methods that only read as reads', async () => {
    const apiKey = await newServiceKey();
    const getTask = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'no-such-task' } };
    for (let index = 0; index <= LIMIT; index++)
      expectError(await on('POST', '/a2a/no-such-agent', { apiKey, body: getTask }), 404, 'AGENT_NOT_FOUND');
    expect((await on('POST', '/rooms', { apiKey, body: { name: 'After reads' } })).status).toBe(201);
    const sendMessage = { jsonrpc: '2.0', id: 2, method: 'SendMessage', params: {} };
    for (let index = 1; index < LIMIT; index++) await on('POST', '/a2a/no-such-agent', { apiKey, body: sendMessage });
    expectRateLimited(await on('POST', '/a2a/no-such-agent', { apiKey, body: sendMessage }));
  });

  it('does not limit the admin', async () => {
    for (let index = 0; index <= LIMIT; index++)
      expect((await on('POST', '/rooms', { apiKey: 'admin', body: { name: 'Admin' } })).status).toBe(201);
  });
});

describe('requests without a credential, per address', () => {
  it(`answers the request after ${LIMIT} in a window 429, leaves other addresses alone, warns once, counts each, and resets`, async () => {
    const limited = '127.0.0.2';
    const listRooms = (localAddress: string) => on('GET', '/rooms', { localAddress });
    for (let index = 0; index < LIMIT; index++) expect((await listRooms(limited)).status).toBe(200);
    const waitMs = expectRateLimited(await listRooms(limited));
    expectRateLimited(await on('GET', `/rooms/${await newRoom()}/messages`, { localAddress: limited }));
    expect((await listRooms('127.0.0.3')).status).toBe(200);
    // Credentials are counted per principal, not against the address.
    expect((await on('GET', '/rooms', { localAddress: limited, apiKey: await newServiceKey() })).status).toBe(200);

    expect(warningsFor('anonymous', limited)).toBe(1);
    const metrics = await on('GET', '/metrics');
    expect(Number(/rate_limited_total\{limit="anonymous"\} (\d+)/.exec(metrics.body)?.[1])).toBeGreaterThanOrEqual(2);

    await sleep(Math.min(waitMs, RESET_WAIT_MS));
    await until(async () => (await listRooms(limited)).status === 200, 'an anonymous read after the window');
  });

  it('counts every client behind an untrusted proxy as its address: X-Forwarded-For is not believed', async () => {
    const proxy = '127.0.0.13';
    const listRoomsFor = (forwardedFor: string) =>
      on('GET', '/rooms', { localAddress: proxy, headers: { 'x-forwarded-for': forwardedFor } });
    for (let index = 0; index < LIMIT; index++) expect((await listRoomsFor(`10.0.1.${index}`)).status).toBe(200);
    expectRateLimited(await listRoomsFor('10.0.1.200'));
  });

  it('leaves the ops routes open', async () => {
    for (let index = 0; index <= LIMIT; index++)
      expect((await on('GET', '/healthz', { localAddress: '127.0.0.4' })).status).toBe(200);
  });
});

describe('rejected credentials, per address', () => {
  it(`blocks an address after more than ${LIMIT} rejected credentials, valid ones included, and only that address, for AUTH_FAILURE_BLOCK_MS`, async () => {
    const guessing = '127.0.0.5';
    const valid = await newServiceKey();
    for (let index = 0; index <= LIMIT; index++)
      expectError(
        await on('GET', '/agents', { localAddress: guessing, apiKey: `acs_wrong_${index}` }),
        401,
        'UNAUTHENTICATED',
      );
    const waitMs = expectRateLimited(await on('GET', '/agents', { localAddress: guessing, apiKey: valid }));
    expect(warningsFor('auth-failures', guessing)).toBe(1);
    // The block is on credentials: anonymous reads are counted on their own.
    expect((await on('GET', '/rooms', { localAddress: guessing })).status).toBe(200);
    expect((await on('GET', '/agents', { localAddress: '127.0.0.6', apiKey: valid })).status).toBe(200);
    // WebSocket handshakes authenticate the same way.
    const handshake = await refusedHandshake(
      await newRoom(),
      { human: newUserId() },
      { wsUrl, localAddress: guessing },
    );
    expect(handshake).toMatchObject({ status: 429, body: { error: { code: 'RATE_LIMITED' } } });

    await sleep(Math.min(waitMs, RESET_WAIT_MS));
    await until(
      async () => (await on('GET', '/agents', { localAddress: guessing, apiKey: valid })).status === 200,
      'a valid key after the block',
    );
  });
});

describe('open WebSockets', () => {
  const connect = (roomId: string, credential: SocketCredential, localAddress: string) =>
    RoomClient.connect(roomId, credential, { wsUrl, localAddress });

  it(`refuses a principal's socket beyond ${SOCKETS_PER_PRINCIPAL} with 429 and Retry-After, and admits it again once one closes`, async () => {
    const [roomId, otherRoomId] = [await newRoom(), await newRoom()];
    const human = newUserId();
    const open = [await connect(roomId, { human }, '127.0.0.7'), await connect(otherRoomId, { human }, '127.0.0.7')];
    try {
      const refused = await refusedHandshake(roomId, { human }, { wsUrl, localAddress: '127.0.0.8' });
      expect(refused).toMatchObject({
        status: 429,
        body: { error: { code: 'RATE_LIMITED', message: expect.stringContaining('This credential') } },
      });
      expect(refused.retryAfter).toBe(String(CAP_RETRY_AFTER_MS / 1000));
      open.push(await connect(roomId, { human: newUserId() }, '127.0.0.7'));

      await open.shift()!.close();
      open.push(
        await until(() => connect(roomId, { human }, '127.0.0.7').catch(() => undefined), 'a socket after one closed'),
      );
    } finally {
      await Promise.all(open.map((client) => client.close()));
    }
  });

  it(`refuses an address's socket beyond ${SOCKETS_PER_ADDRESS}, and admits the same principal from another address`, async () => {
    const roomId = await newRoom();
    const [first, second] = [newUserId(), newUserId()];
    const open = [
      await connect(roomId, { human: first }, '127.0.0.9'),
      await connect(roomId, { human: second }, '127.0.0.9'),
      await connect(roomId, { human: newUserId() }, '127.0.0.9'),
    ];
    try {
      const refused = await refusedHandshake(roomId, { human: second }, { wsUrl, localAddress: '127.0.0.9' });
      expect(refused).toMatchObject({
        status: 429,
        body: { error: { code: 'RATE_LIMITED', message: expect.stringContaining('This address') } },
      });
      expect(refused.retryAfter).toBe(String(CAP_RETRY_AFTER_MS / 1000));
      open.push(await connect(roomId, { human: second }, '127.0.0.10'));
    } finally {
      await Promise.all(open.map((client) => client.close()));
    }
  });
});

describe('connections per address', () => {
  /** A raw connection from `localAddress`, resolved once connected; `closed` settles when the server hangs up. */
  function openConnection(localAddress: string): Promise<{ socket: net.Socket; closed: Promise<void> }> {
    const port = Number(new URL(baseUrl).port);
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => resolve({ socket, closed }));
      const closed = new Promise<void>((done) => socket.once('close', () => done()));
      socket.on('error', () => undefined);
      socket.once('error', reject);
    });
  }

  it(`closes a connection beyond ${CONNECTIONS_PER_ADDRESS} from one address at once, serves other addresses, and takes it again once one closes`, async () => {
    const crowded = '127.0.0.11';
    const held = await Promise.all(Array.from({ length: CONNECTIONS_PER_ADDRESS }, () => openConnection(crowded)));
    try {
      const excess = await openConnection(crowded);
      let received = '';
      excess.socket.on('data', (chunk) => (received += chunk.toString('utf8')));
      excess.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      let giveUp: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        excess.closed.then(() => 'closed'),
        new Promise((resolve) => (giveUp = setTimeout(resolve, STUCK_AFTER_MS, 'still open'))),
      ]);
      clearTimeout(giveUp);
      expect({ outcome, received }).toEqual({ outcome: 'closed', received: '' });
      // The connections held are still served.
      const answer = new Promise<string>((resolve) =>
        held[0].socket.once('data', (chunk) => resolve(chunk.toString('utf8'))),
      );
      held[0].socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      expect((await answer).split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
      expect((await on('GET', '/healthz', { localAddress: '127.0.0.12' })).status).toBe(200);

      const freed = held.pop()!;
      freed.socket.destroy();
      await freed.closed;
      await until(
        async () => (await on('GET', '/healthz', { localAddress: crowded }).catch(() => undefined))?.status === 200,
        'a connection after one closed',
      );
    } finally {
      for (const { socket } of held) socket.destroy();
    }
  });
});
