import type http from 'node:http';

/** Resolves once `server` listens on `host:port`; rejects with the error that stopped it (a port in use). */
export function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

/** Stops `server` and ends its connections, idle keep-alive ones included, rather than waiting for them. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
