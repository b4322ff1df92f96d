import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP proxy to `target` that adds `X-Api-Key: apiKey` to every request, for a client
 * that cannot send headers of its own (the MCP conformance harness's server scenarios). Everything
 * else, the Host and Origin headers included, passes as the client sent it, so what the service
 * answers is what it would answer that client. Its URL, and a function that closes it.
 */
export async function apiKeyProxy(
  target: string,
  apiKey: string,
): Promise<{ url: string; close: () => Promise<void> }> {
  const upstream = new URL(target);
  const proxy = http.createServer((request, response) => {
    const forwarded = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, 'x-api-key': apiKey },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => response.destroy());
    // A client that stops reading a stream ends the service's side of it too.
    response.on('close', () => forwarded.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
