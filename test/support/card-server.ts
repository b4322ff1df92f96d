import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { useForFile } from './use-for-file';

/**
 * A server on 127.0.0.1 that answers `card` (an A2A Agent Card, or anything that pretends to be
 * one) at every path, for the file's tests; the function returns the `/a2a` URL to register.
 */
export function useCardServer(card: Record<string, unknown>): () => string {
  const server = useForFile(
    'the card server',
    async () => {
      const body = JSON.stringify(card);
      const listening = http.createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' }).end(body);
      });
      await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
      return listening;
    },
    (listening) => new Promise<void>((resolve) => listening.close(() => resolve())),
  );
  return () => `http://127.0.0.1:${(server().address() as AddressInfo).port}/a2a`;
}
