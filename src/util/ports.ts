import net from 'node:net';

/** Listens on `port` (0: any) of `host` and closes at once, resolving the port it was given. */
export function listenOnce(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: bound } = server.address() as net.AddressInfo;
      server.close(() => resolve(bound));
    });
  });
}

/** A TCP port on loopback that nothing listens on right now. */
export const freePort = (): Promise<number> => listenOnce('127.0.0.1', 0);
