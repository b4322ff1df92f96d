import net from 'node:net';
import { agentRegistration } from './support/agents';
import { call, type Reply } from './support/http';
import { testStack } from './support/test-stack';

function expectNoSniffNoStore(reply: Pick<Reply, 'headers'>): void {
  expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
  expect(reply.headers.get('cache-control')).toBe('no-store');
}

/** The head of the answer to `request`, written on a raw socket (for answers Node gives before Koa). */
function rawAnswerHead(request: string): Promise<string> {
  const { port } = new URL(testStack().baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(request));
    let answer = '';
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('end', () => resolve(answer.split('\r\n\r\n')[0].toLowerCase()));
    socket.on('error', reject);
  });
}

describe('headers of every answer', () => {
  it('marks the answers that carry an API key or signing secret not to be stored, nor sniffed', async () => {
    const registered = await call('POST', '/agents', { apiKey: 'admin', body: agentRegistration() });
    expect(registered.status).toBe(201);
    expect(registered.body.apiKey).toEqual(expect.any(String));
    expectNoSniffNoStore(registered);

    const rotated = await call('POST', `/v1/agents/${registered.body.agentId}/keys/rotate`, { apiKey: 'admin' });
    expect(rotated.status).toBe(200);
    expect(rotated.body.signingSecret).toEqual(expect.any(String));
    expectNoSniffNoStore(rotated);

    const key = await call('POST', '/keys', { apiKey: 'admin', body: { description: 'headers test' } });
    expect(key.status).toBe(201);
    expect(key.body.key).toEqual(expect.any(String));
    expectNoSniffNoStore(key);
  });

  it.each([
    ['an ops answer', 'GET', '/healthz', 200],
    ['an error of a route', 'GET', '/agents/no-such-agent', 404],
    ['a refused credential', 'GET', '/agents', 401],
    ['no route', 'GET', '/no/such/route', 404],
    ['a method a route does not take', 'DELETE', '/tasks', 405],
  ])('sends them on %s too', async (_what, method, path, status) => {
    const reply = await call(method, path, status === 401 ? {} : { apiKey: 'admin' });
    expect(reply.status).toBe(status);
    expectNoSniffNoStore(reply);
  });

  it('sends them on the answers Node gives before the app: a malformed request, a refused WebSocket handshake', async () => {
    const malformed = await rawAnswerHead('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: a\x01b\r\n\r\n');
    expect(malformed).toMatch(/^http\/1\.1 400 /);
    expect(malformed).toContain('\r\nx-content-type-options: nosniff');
    expect(malformed).toContain('\r\ncache-control: no-store');

    const handshake = await rawAnswerHead(
      'GET /parties/chat-server/no-such-room HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
    expect(handshake).toMatch(/^http\/1\.1 40\d /);
    expect(handshake).toContain('\r\nx-content-type-options: nosniff');
    expect(handshake).toContain('\r\ncache-control: no-store');
  });
});
