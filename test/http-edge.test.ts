import net from 'node:net';
import { call, expectError } from './support/http';
import { rawRequest } from './support/raw-http';
import { testStack } from './support/test-stack';
import { STUCK_AFTER_MS } from './support/until';

describe('HTTP edge of the running service', () => {
  it('answers /healthz and /readyz', async () => {
    expect(await call('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    const ready = await call('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { mongodb: 'ok', temporal: 'ok' } });
  });

  it('serves Prometheus metrics', async () => {
    const reply = await call('GET', '/metrics');
    expect(reply.status).toBe(200);
    expect(reply.body).toContain('http_request_duration_seconds_bucket');
  });

  it('answers an unknown route with 404 and the contract error body', async () => {
    const error = expectError(await call('GET', '/no/such/route'), 404, 'NOT_FOUND');
    expect(error.message).toContain('/no/such/route');
  });

  it('answers a method a route does not take with 405, the contract error body and Allow', async () => {
    const reply = await call('DELETE', '/tasks', { apiKey: 'admin' });
    expect(expectError(reply, 405, 'METHOD_NOT_ALLOWED').message).toBe(
      'DELETE is not allowed on /tasks; allowed: POST',
    );
    expect(reply.headers.get('allow')).toBe('POST');
  });

  it('answers a method no route knows with 405, never a 5xx', async () => {
    const reply = await call('PROPFIND', '/v1/agents', { apiKey: 'admin' });
    expectError(reply, 405, 'METHOD_NOT_ALLOWED');
    expect(reply.headers.get('allow')).toMatch(/GET/);
    expectError(await call('PROPFIND', '/no/such/route', { apiKey: 'admin' }), 404, 'NOT_FOUND');
  });

  it('answers malformed JSON with 400 VALIDATION_ERROR', async () => {
    const reply = await call('POST', '/agents', {
      rawBody: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(expectError(reply, 400, 'VALIDATION_ERROR').message).toMatch(/Malformed JSON/);
  });

  it('answers JSON nested deeper than 100 levels with 400 VALIDATION_ERROR, whatever the route', async () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const task = (params: string) => `{"agentId":"a","operation":"tools/x","params":{"deep":${params}}}`;
    const headers = { 'content-type': 'application/json' };
    const tooDeep = await call('POST', '/tasks', { apiKey: 'admin', rawBody: task(nested(5000)), headers });
    expect(expectError(tooDeep, 400, 'VALIDATION_ERROR').message).toBe('JSON body nests deeper than 100 levels');
    const deepEnough = await call('POST', '/tasks', { apiKey: 'admin', rawBody: task(nested(97)), headers });
    expectError(deepEnough, 404, 'AGENT_NOT_FOUND');
  });

  it('answers a body over MAX_BODY_BYTES with 413, without keeping it', async () => {
    const reply = await call('POST', '/agents', {
      rawBody: `"${'x'.repeat(1024 * 1024 + 10)}"`,
      headers: { 'content-type': 'application/json' },
    });
    expectError(reply, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('delivers the 413 to clients still sending a body over the limit, with its length declared or chunked, many at a time', async () => {
    const { port } = new URL(testStack().baseUrl);
    const body = Buffer.from(`"${'x'.repeat(2 * 1024 * 1024)}"`);
    const send = (chunked: boolean) =>
      rawRequest(
        Number(port),
        {
          method: 'POST',
          path: '/agents',
          headers: {
            'content-type': 'application/json',
            'x-api-key': 'admin',
            ...(chunked ? { 'transfer-encoding': 'chunked' } : {}),
          },
          body,
        },
        STUCK_AFTER_MS,
      ).then(
        (answer) => answer.status,
        (error: NodeJS.ErrnoException) => error.code ?? error.message,
      );
    // Eight clients, each sending thirty: closing a connection with the body unread reset some of them (EPIPE).
    const outcomes = (
      await Promise.all(
        Array.from({ length: 8 }, async (_, client) => {
          const statuses = [];
          for (let request = 0; request < 30; request += 1) statuses.push(await send(client % 2 === 1));
          return statuses;
        }),
      )
    ).flat();
    expect(outcomes.filter((outcome) => outcome !== 413)).toEqual([]);
  });

  it('answers requests that Node refuses before the app, headers too large or malformed, with the contract error body', async () => {
    const tooLong = await call('GET', `/agents/search?query=${'a'.repeat(20_000)}`, { apiKey: 'admin' });
    expectError(tooLong, 431, 'PAYLOAD_TOO_LARGE');

    const { port } = new URL(testStack().baseUrl);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () =>
        socket.write('POST /tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: a\x01b\r\nContent-Length: 0\r\n\r\n'),
      );
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
    const [head, body] = raw.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(body)).toEqual({
      error: { code: 'VALIDATION_ERROR', message: expect.stringMatching(/^Malformed HTTP request: /) },
    });
  });

  it('answers an Expect other than 100-continue with 417 and the contract error body, and nothing after it', async () => {
    const { port } = new URL(testStack().baseUrl);
    for (const [method, path] of [
      ['GET', '/healthz'],
      ['POST', '/tasks'],
    ]) {
      // A body the server does not wait for: it arrives after the 417, on a connection the answer closed.
      const answer = await rawRequest(
        Number(port),
        {
          method,
          path,
          headers: { expect: 'something-else', 'content-type': 'application/json' },
          body: Buffer.from('{"a":1}'),
        },
        STUCK_AFTER_MS,
      );
      expect(answer.status).toBe(417);
      expect(JSON.parse(answer.text)).toEqual({
        error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('Expect') },
      });
    }
  });

  it('refuses bodies that are not JSON', async () => {
    const reply = await call('POST', '/agents', {
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(reply, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('echoes a request id', async () => {
    const reply = await call('GET', '/healthz', { headers: { 'x-request-id': 'trace-me-123' } });
    expect(reply.headers.get('x-request-id')).toBe('trace-me-123');
  });
});
