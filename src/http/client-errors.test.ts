import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rawRequest } from '../../test/support/raw-http';
import { answerClientErrors } from './client-errors';

describe('answers to requests refused before the app', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    // Answers later, as the app does after reading the store.
    server = http.createServer((_request, response) => void setTimeout(() => response.end('served'), 20));
    answerClientErrors(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('answer an Expect other than 100-continue with one 417 in the contract shape, also when a body follows it', async () => {
    for (const body of [undefined, Buffer.from('{"a":1}')]) {
      const answer = await rawRequest(
        port,
        { method: 'GET', path: '/', headers: { expect: 'something-else', 'content-type': 'application/json' }, body },
        5_000,
      );
      expect(answer.status).toBe(417);
      expect(JSON.parse(answer.text)).toEqual({
        error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('Expect') },
      });
    }
  });

  it('leave the answer to a request that closes the connection alone when bytes follow it', async () => {
    // Node's client sends a GET's body without a length, after `Connection: close`.
    const answer = await rawRequest(
      port,
      { method: 'GET', path: '/', headers: {}, body: Buffer.from('not a request') },
      5_000,
    );
    expect({ status: answer.status, text: answer.text }).toEqual({ status: 200, text: 'served' });
  });
});
