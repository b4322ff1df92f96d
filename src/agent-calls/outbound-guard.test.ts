import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { DestinationRefused, isPublicAddress, outboundDispatcher } from './outbound-guard';

describe('outbound guard', () => {
  it.each([
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['192.168.0.1', false],
    ['169.254.169.254', false],
    ['::1', false],
    ['fe80::1', false],
    ['::ffff:127.0.0.1', false],
    ['0.0.0.0', false],
    // IPv4-compatible (::/96, deprecated): some stacks still route them to the IPv4 address.
    ['::7f00:1', false],
    ['::a9fe:a9fe', false],
    ['::808:808', false],
    ['93.184.215.14', true],
    ['2606:4700::1111', true],
  ])('%s is public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });

  describe('against a loopback server', () => {
    let server: http.Server;
    let port: number;
    beforeAll(async () => {
      server = http.createServer((_request, response) => response.end('ok'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));

    it('refuses loopback by IP literal and by a name that resolves to it, without saying what the name resolved to', async () => {
      const dispatcher = outboundDispatcher({ allowPrivate: false, connectTimeoutMs: 10_000 });
      for (const url of [`http://127.0.0.1:${port}/`, `http://localhost:${port}/`]) {
        const refusal = await request(url, { dispatcher }).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refusal).toBeInstanceOf(DestinationRefused);
        expect((refusal as Error).message).not.toMatch(/127\.0\.0\.1|::1/);
      }
    });

    it('connects when private destinations are allowed', async () => {
      const dispatcher = outboundDispatcher({ allowPrivate: true, connectTimeoutMs: 10_000 });
      const reply = await request(`http://127.0.0.1:${port}/`, { dispatcher });
      expect(await reply.body.text()).toBe('ok');
    });
  });
});
