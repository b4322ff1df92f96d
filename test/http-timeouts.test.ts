import net from 'node:net';
import type { ServiceProcess } from './support/service-process';
import { createRoom, isMessage, RoomClient } from './support/room-client';
import { startSecondApi } from './support/second-api';
import { newUserId } from './support/humans';
import { STUCK_AFTER_MS } from './support/until';

/**
 * A second API process with small HTTP_HEADERS_TIMEOUT_MS and HTTP_REQUEST_TIMEOUT_MS, so that a
 * client dripping its request slowly is cut within seconds rather than the defaults' 10 s and 60 s.
 */
const HEADERS_TIMEOUT_MS = 600;
const REQUEST_TIMEOUT_MS = 1_200;
/** The request timeout and Node's check of it (once a second at most, see src/service.ts), with room to spare. */
const PAST_REQUEST_TIMEOUT_MS = REQUEST_TIMEOUT_MS + 1_000 + 1_500;

let second: ServiceProcess;
let port: number;
let wsUrl: string;

beforeAll(async () => {
  ({
    process: second,
    port,
    wsUrl,
  } = await startSecondApi('http-timeouts', {
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  }));
});

afterAll(async () => {
  await second?.stop();
});

/**
 * Opens a raw connection, writes `start`, then `drip` every 200 ms, and resolves with what the
 * server answered and when it closed the connection (undefined: it had not after STUCK_AFTER_MS).
 */
function slowClient(start: string, drip: string): Promise<{ answer: string; closedAfterMs: number | undefined }> {
  return new Promise((resolve) => {
    const started = Date.now();
    let answer = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(start));
    const dripping = setInterval(() => socket.writable && socket.write(drip), 200);
    const finish = (closedAfterMs: number | undefined) => {
      clearInterval(dripping);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ answer, closedAfterMs });
    };
    const giveUp = setTimeout(() => finish(undefined), STUCK_AFTER_MS);
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => finish(Date.now() - started));
  });
}

function expectRequestTimeout(answer: string): void {
  const [head, body] = answer.split('\r\n\r\n');
  expect(head.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
  expect(JSON.parse(body)).toEqual({ error: { code: 'REQUEST_TIMEOUT', message: expect.any(String) } });
}

describe('slow HTTP clients', () => {
  it('closes a connection whose headers do not end within HTTP_HEADERS_TIMEOUT_MS, with 408 and the contract error body', async () => {
    const { answer, closedAfterMs } = await slowClient('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Slow: 1\r\n');
    expect(closedAfterMs).toBeDefined();
    expectRequestTimeout(answer);
  });

  it('closes a connection whose body does not end within HTTP_REQUEST_TIMEOUT_MS', async () => {
    const head =
      'POST /tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
    const { answer, closedAfterMs } = await slowClient(head, ' ');
    expect(closedAfterMs).toBeDefined();
    // Not before the request timeout: the headers' shorter one no longer applies once they ended.
    // A lower bound the server's own timer sets, which a slow machine only makes later.
    expect(closedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expectRequestTimeout(answer);
  });

  it('leaves a WebSocket on the same server open past HTTP_REQUEST_TIMEOUT_MS', async () => {
    const room = await createRoom();
    const alice = newUserId();
    const client = await RoomClient.connect(room.roomId, { human: alice }, { wsUrl });
    try {
      await new Promise((resolve) => setTimeout(resolve, PAST_REQUEST_TIMEOUT_MS));
      client.sendMessage('still here');
      await client.waitFor(isMessage('still here'));
    } finally {
      await client.close();
    }
  });
});
