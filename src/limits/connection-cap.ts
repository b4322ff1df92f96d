import type { Server } from 'node:http';
import type { ConcurrencyCap } from './concurrency-cap';
import { addressOf } from './limit-keys';

/**
 * Closes a new TCP connection at once when its address already holds its most, before a byte is
 * read: clients that open connections and drip their headers cannot hold more than the cap.
 */
export function capConnectionsPerAddress(server: Server, cap: ConcurrencyCap): void {
  server.on('connection', (socket) => {
    const address = addressOf(socket);
    if (cap.isFull(address)) {
      socket.destroy();
      return;
    }
    socket.once('close', cap.hold(address));
  });
}
