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

/**
 * `count` TCP ports on loopback that nothing listens on right now, all different: each is held open
 * until all are found, since a port closed again may be handed out by the next call.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => net.createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject);
            server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
          }),
      ),
    );
  } finally {
    await Promise.all(
      servers.map(
        (server) => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve())),
      ),
    );
  }
}
