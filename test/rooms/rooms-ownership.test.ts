import { MongoClient } from 'mongodb';
import { registerAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';
import { createRoom } from '../support/room-client';
import { testStack } from '../support/test-stack';

// A room belongs to the principal that created it; only it and admins manage it.

let mongo: MongoClient;
beforeAll(async () => {
  mongo = await MongoClient.connect(testStack().mongoUri);
});
afterAll(() => mongo.close());
const storedRoom = (roomId: string) =>
  mongo
    .db(testStack().mongoDatabase)
    .collection('rooms')
    .findOne({ _id: roomId as never });

const human = (id: string) => ({ type: 'HUMAN', participantId: id });

async function serviceKey(): Promise<{ id: string; key: string }> {
  const reply = await call('POST', '/keys', { apiKey: 'admin', body: { description: 'rooms ownership test' } });
  expect(reply.status).toBe(201);
  return reply.body;
}

/** Service A's private room with a human participant who said something, and service B with an agent of its own. */
async function privateRoomOfA() {
  const [a, b] = await Promise.all([serviceKey(), serviceKey()]);
  const member = newUserId();
  const room = await createRoom({ private: true, participants: [human(member)] }, a.key);
  const said = await call('POST', `/rooms/${room.roomId}/messages`, {
    headers: await humanHeaders(member),
    body: { content: 'for members only' },
  });
  expect(said.status).toBe(201);
  const agentOfB = await registerAgent({}, b.key);
  return { a, b, member, room, agentOfB, before: await storedRoom(room.roomId) };
}

describe('room ownership', () => {
  it('records the creating principal in the stored room', async () => {
    const a = await serviceKey();
    const byService = await createRoom({}, a.key);
    expect((await storedRoom(byService.roomId))?.createdBy).toEqual({ kind: 'service', id: a.id });
    const byAdmin = await createRoom();
    expect((await storedRoom(byAdmin.roomId))?.createdBy).toEqual({ kind: 'admin', id: 'admin' });
  });

  it('hides a private room of service A from service B: 404 to read it, list its messages or manage it; nothing changes', async () => {
    const { b, member, room, agentOfB, before } = await privateRoomOfA();
    const unknown = expectError(await call('GET', '/rooms/no-such-room', { apiKey: b.key }), 404, 'NOT_FOUND');

    expect(expectError(await call('GET', `/rooms/${room.roomId}`, { apiKey: b.key }), 404, 'NOT_FOUND')).toEqual(
      unknown,
    );
    expectError(await call('GET', `/rooms/${room.roomId}/messages`, { apiKey: b.key }), 404, 'NOT_FOUND');
    const join = await call('POST', `/rooms/${room.roomId}/participants`, {
      apiKey: b.key,
      body: { type: 'AGENT', participantId: agentOfB.agentId },
    });
    expectError(join, 404, 'NOT_FOUND');
    expectError(
      await call('DELETE', `/rooms/${room.roomId}/participants/${member}`, { apiKey: b.key }),
      404,
      'NOT_FOUND',
    );

    expect(await storedRoom(room.roomId)).toEqual(before);
    // The agent B tried to add cannot read the history either.
    expectError(await call('GET', `/rooms/${room.roomId}/messages`, { apiKey: agentOfB.apiKey }), 404, 'NOT_FOUND');
  });

  it("lets service A and admin read and manage A's private room", async () => {
    const { a, member, room } = await privateRoomOfA();
    for (const apiKey of [a.key, 'admin']) {
      expect((await call('GET', `/rooms/${room.roomId}`, { apiKey })).body.participants).toEqual([human(member)]);
      expect(
        (await call('GET', `/rooms/${room.roomId}/messages`, { apiKey })).body.map((frame: any) => frame.data.content),
      ).toEqual(['for members only']);
    }
    const agentOfA = await registerAgent({}, a.key);
    const added = await call('POST', `/rooms/${room.roomId}/participants`, {
      apiKey: a.key,
      body: { type: 'AGENT', participantId: agentOfA.agentId },
    });
    expect(added.status).toBe(201);
    const removed = await call('DELETE', `/rooms/${room.roomId}/participants/${agentOfA.agentId}`, { apiKey: 'admin' });
    expect(removed.status).toBe(200);
    const removedByA = await call('DELETE', `/rooms/${room.roomId}/participants/${member}`, { apiKey: a.key });
    expect(removedByA.body.participants).toEqual([]);
    expect((await storedRoom(room.roomId))?.participants).toEqual([]);
  });

  it("answers 403 to service B managing A's public room, which B may still read; nothing changes", async () => {
    const [a, b] = await Promise.all([serviceKey(), serviceKey()]);
    const room = await createRoom({ participants: [human('resident')] }, a.key);
    const before = await storedRoom(room.roomId);
    expect((await call('GET', `/rooms/${room.roomId}`, { apiKey: b.key })).status).toBe(200);
    expectError(
      await call('POST', `/rooms/${room.roomId}/participants`, { apiKey: b.key, body: human('intruder') }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await call('DELETE', `/rooms/${room.roomId}/participants/resident`, { apiKey: b.key }),
      403,
      'FORBIDDEN',
    );
    expect(await storedRoom(room.roomId)).toEqual(before);
    expect(
      (await call('POST', `/rooms/${room.roomId}/participants`, { apiKey: a.key, body: human('guest') })).status,
    ).toBe(201);
  });

  it('hides a private room from a human or agent that does not take part in it (404, as to service B)', async () => {
    const { room } = await privateRoomOfA();
    const outsider = await registerAgent();
    for (const credentials of [{ headers: await humanHeaders(newUserId()) }, { apiKey: outsider.apiKey }]) {
      expectError(await call('GET', `/rooms/${room.roomId}`, credentials), 404, 'NOT_FOUND');
      expectError(await call('GET', `/rooms/${room.roomId}/messages`, credentials), 404, 'NOT_FOUND');
      expectError(
        await call('POST', `/rooms/${room.roomId}/messages`, { ...credentials, body: { content: 'hi' } }),
        404,
        'NOT_FOUND',
      );
    }
  });

  it('leaves a room stored without a creator (before creators were recorded) to admins', async () => {
    const a = await serviceKey();
    const room = await createRoom({ participants: [human('resident')] }, a.key);
    await mongo
      .db(testStack().mongoDatabase)
      .collection('rooms')
      .updateOne({ _id: room.roomId as never }, { $unset: { createdBy: '' } });
    expectError(
      await call('POST', `/rooms/${room.roomId}/participants`, { apiKey: a.key, body: human('guest') }),
      403,
      'FORBIDDEN',
    );
    expect(
      (await call('POST', `/rooms/${room.roomId}/participants`, { apiKey: 'admin', body: human('guest') })).status,
    ).toBe(201);
  });
});
