import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { registerAgent } from '../support/agents';
import { humanTokens } from '../support/humans';
import { createRoom, RoomClient } from '../support/room-client';
import { testStack } from '../support/test-stack';

const asProtocol = (name: string, value: string) => `acs.${name}.${Buffer.from(value).toString('base64url')}`;

/** Opens the room's socket with `protocols` and nothing else: the handshake's status, and the socket when it opened. */
function openWith(roomId: string, protocols: string[]): Promise<{ status: number; ws?: WebSocket; answered?: string }> {
  const ws = new WebSocket(`${testStack().wsUrl}/parties/chat-server/${roomId}`, protocols);
  return new Promise((resolve, reject) => {
    ws.once('upgrade', (response) =>
      resolve({ status: 101, ws, answered: response.headers['sec-websocket-protocol'] }),
    );
    ws.once('unexpected-response', (_request, response) => resolve({ status: response.statusCode ?? 0 }));
    ws.once('error', reject);
  });
}

describe('room socket credentials as subprotocols, for browsers', () => {
  it("takes an agent's key or a person's tokens, and answers with the marker alone", async () => {
    const agent = await registerAgent();
    const room = await createRoom();
    const byKey = await openWith(room.roomId, ['acs.credentials', asProtocol('api-key', agent.apiKey)]);
    expect(byKey).toMatchObject({ status: 101, answered: 'acs.credentials' });
    const person = `person-${randomUUID()}`;
    const { session, identity } = await humanTokens(person);
    const byTokens = await openWith(room.roomId, [
      'acs.credentials',
      asProtocol('authorization', `Bearer ${session}`),
      asProtocol('identity-token', identity),
    ]);
    expect(byTokens).toMatchObject({ status: 101, answered: 'acs.credentials' });
    const watcher = await RoomClient.connect(room.roomId, { human: `watcher-${randomUUID()}` });
    byTokens.ws!.send(JSON.stringify({ type: 'MESSAGE', data: { content: 'from a browser' } }));
    const message = await watcher.waitFor((frame) => frame.type === 'MESSAGE');
    expect(message.data).toMatchObject({ content: 'from a browser', sender: { type: 'HUMAN', id: person } });
    for (const socket of [byKey.ws!, byTokens.ws!]) socket.close();
    await watcher.close();
  });

  it('refuses credentials offered without the marker (400), whose answer could name no protocol', async () => {
    const agent = await registerAgent();
    const room = await createRoom();
    expect(await openWith(room.roomId, [asProtocol('api-key', agent.apiKey)])).toEqual({ status: 400 });
    expect(await openWith(room.roomId, [asProtocol('api-key', agent.apiKey), 'chat'])).toEqual({ status: 400 });
  });

  it('refuses a bad credential as over HTTP (401), and an admin key (403)', async () => {
    const room = await createRoom();
    expect((await openWith(room.roomId, ['acs.credentials', asProtocol('api-key', 'not-a-key')])).status).toBe(401);
    expect((await openWith(room.roomId, ['acs.credentials', asProtocol('api-key', testStack().adminKey)])).status).toBe(
      403,
    );
  });
});
