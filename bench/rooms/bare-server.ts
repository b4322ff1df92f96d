// The baseline of bench/rooms: a bare `ws` broadcast server, no authentication, no storage.
// Every text frame it receives goes to every connected client, the sender included.
import { WebSocketServer } from 'ws';

const port = Number(process.env.PORT);
const server = new WebSocketServer({ host: '127.0.0.1', port, maxPayload: 1024 * 1024 });
server.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => {
    for (const client of server.clients) client.send(data, { binary: isBinary });
  });
});
server.on('listening', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
