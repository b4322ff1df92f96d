import { randomUUID } from 'node:crypto';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { createRoom, RoomClient } from '../support/room-client';
import { until } from '../support/until';

describe('GET /rooms/{roomId}/presence', () => {
  it('lists who is connected now, and answers a private room as GET /rooms/{roomId} does', async () => {
    const agent = await registerAgent();
    const room = await createRoom({ private: true, participants: [{ type: 'AGENT', participantId: agent.agentId }] });
    const path = `/rooms/${room.roomId}/presence`;
    expect((await call('GET', path, { apiKey: 'admin' })).body).toEqual([]);
    const socket = await RoomClient.connect(room.roomId, { apiKey: agent.apiKey }, { joinedAs: agent.agentId });
    expect((await call('GET', path, { apiKey: agent.apiKey })).body).toEqual([{ type: 'AGENT', id: agent.agentId }]);
    expect((await call('GET', path)).status).toBe(404);
    expect((await call('GET', `/rooms/${randomUUID()}/presence`, { apiKey: 'admin' })).status).toBe(404);
    await socket.close();
    await until(
      async () => (await call('GET', path, { apiKey: 'admin' })).body.length === 0,
      'the agent is no longer listed',
    );
  });
});
