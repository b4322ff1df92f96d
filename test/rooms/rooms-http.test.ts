import { MongoClient } from 'mongodb';
import { registerAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';
import { ISO_TIMESTAMP as ISO, UUID } from '../support/patterns';
import { createRoom } from '../support/room-client';
import { testStack } from '../support/test-stack';

let mongo: MongoClient;
beforeAll(async () => {
  mongo = await MongoClient.connect(testStack().mongoUri);
});
afterAll(() => mongo.close());
const db = () => mongo.db(testStack().mongoDatabase);

const human = (id: string) => ({ type: 'HUMAN', participantId: id });

async function post(roomId: string, userId: string, content: string) {
  const reply = await call('POST', `/rooms/${roomId}/messages`, {
    headers: await humanHeaders(userId),
    body: { content },
  });
  expect(reply.status).toBe(201);
  return reply.body;
}

describe('POST /rooms', () => {
  it('creates a room with the defaults and answers the room record', async () => {
    const reply = await call('POST', '/rooms', { apiKey: 'admin', body: { name: 'Lobby' } });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      roomId: expect.stringMatching(UUID),
      id: reply.body.roomId,
      name: 'Lobby',
      type: 'CHAT',
      description: '',
      maxParticipants: 100,
      private: false,
      metadata: null,
      participants: [],
      createdAt: expect.stringMatching(ISO),
      updatedAt: reply.body.createdAt,
    });
    expect((await call('GET', `/rooms/${reply.body.roomId}`)).body).toEqual(reply.body);
  });

  it('keeps free metadata whose keys MongoDB would refuse, and agent and human participants', async () => {
    const agent = await registerAgent();
    const metadata = { 'a.b': 1, $ref: 'x', nested: { 'c.d': [1, { $e: true }] } };
    const participants = [{ type: 'AGENT', participantId: agent.agentId }, human('alice')];
    const room = await createRoom({
      type: 'SUPPORT',
      description: 'd',
      maxParticipants: 2,
      private: true,
      metadata,
      participants,
    });
    expect(room).toMatchObject({
      type: 'SUPPORT',
      description: 'd',
      maxParticipants: 2,
      private: true,
      metadata,
      participants,
    });
    const stored = await db()
      .collection('rooms')
      .findOne({ _id: room.roomId as never });
    expect(typeof stored?.metadata).toBe('string');
  });

  it('needs an admin or service key', async () => {
    expectError(await call('POST', '/rooms', { body: { name: 'x' } }), 401, 'UNAUTHENTICATED');
    expectError(
      await call('POST', '/rooms', { headers: await humanHeaders(newUserId()), body: { name: 'x' } }),
      403,
      'FORBIDDEN',
    );
    const agent = await registerAgent();
    expectError(await call('POST', '/rooms', { apiKey: agent.apiKey, body: { name: 'x' } }), 403, 'FORBIDDEN');
    const serviceKey = await call('POST', '/keys', { apiKey: 'admin', body: { description: 'rooms test' } });
    expect(serviceKey.status).toBe(201);
    expect((await call('POST', '/rooms', { apiKey: serviceKey.body.key, body: { name: 'by service' } })).status).toBe(
      201,
    );
  });

  it.each([
    ['no name', {}],
    ['an empty name', { name: '' }],
    ['maxParticipants 0', { name: 'x', maxParticipants: 0 }],
    ['a fractional maxParticipants', { name: 'x', maxParticipants: 1.5 }],
    ['an unknown field', { name: 'x', colour: 'red' }],
    ['metadata that is not an object', { name: 'x', metadata: [1] }],
    ['a participant of unknown type', { name: 'x', participants: [{ type: 'ROBOT', participantId: 'r' }] }],
    [
      'more participants than maxParticipants',
      { name: 'x', maxParticipants: 1, participants: [human('a'), human('b')] },
    ],
    ['a participant listed twice', { name: 'x', participants: [human('a'), human('a')] }],
    ['a body that is not an object', 'room'],
  ])('answers 400 for %s', async (_case, body) => {
    expectError(await call('POST', '/rooms', { apiKey: 'admin', body }), 400, 'VALIDATION_ERROR');
  });

  it('answers 404 AGENT_NOT_FOUND for an agent participant that is not registered', async () => {
    const reply = await call('POST', '/rooms', {
      apiKey: 'admin',
      body: { name: 'x', participants: [{ type: 'AGENT', participantId: 'no-such-agent' }] },
    });
    expectError(reply, 404, 'AGENT_NOT_FOUND');
  });
});

describe('reading rooms', () => {
  it('GET /rooms lists public rooms without credentials, never private ones, in pages', async () => {
    const open = await createRoom({ name: 'open' });
    const closed = await createRoom({ name: 'closed', private: true });
    const all: any[] = [];
    let after: string | undefined;
    for (let page = 0; page < 100; page++) {
      const reply = await call('GET', `/rooms?limit=200${after ? `&after=${after}` : ''}`);
      expect(reply.status).toBe(200);
      all.push(...reply.body);
      if (reply.body.length < 200) break;
      after = reply.body[reply.body.length - 1].roomId;
    }
    expect(all.map((room) => room.roomId)).toContain(open.roomId);
    expect(all.map((room) => room.roomId)).not.toContain(closed.roomId);
    expect(all.every((room) => room.private === false)).toBe(true);
    const one = await call('GET', '/rooms?limit=1');
    expect(one.body).toHaveLength(1);
  });

  it.each(['limit=0', 'limit=201', 'limit=abc', 'colour=red'])('GET /rooms?%s answers 400', async (query) => {
    expectError(await call('GET', `/rooms?${query}`), 400, 'VALIDATION_ERROR');
  });

  it('GET /rooms/{roomId}: public for anyone, private for participants, its creator and admin (others: 404)', async () => {
    const member = newUserId();
    const room = await createRoom({ private: true, participants: [human(member)] });
    // Anonymous callers get the answer of a room that does not exist: no 401 tells that it does.
    const anonymous = await call('GET', `/rooms/${room.roomId}`);
    expectError(anonymous, 404, 'NOT_FOUND');
    expect(anonymous.body).toEqual((await call('GET', '/rooms/no-such-room')).body);
    expectError(
      await call('GET', `/rooms/${room.roomId}`, { headers: await humanHeaders(newUserId()) }),
      404,
      'NOT_FOUND',
    );
    expect((await call('GET', `/rooms/${room.roomId}`, { headers: await humanHeaders(member) })).body).toEqual(room);
    expect((await call('GET', `/rooms/${room.roomId}`, { apiKey: 'admin' })).status).toBe(200);
    expectError(await call('GET', '/rooms/no-such-room'), 404, 'NOT_FOUND');
  });

  it('GET /user/rooms lists the rooms a human or an agent takes part in', async () => {
    const user = newUserId();
    const agent = await registerAgent();
    const mine = await createRoom({
      private: true,
      participants: [human(user), { type: 'AGENT', participantId: agent.agentId }],
    });
    const alsoMine = await createRoom({ participants: [human(user)] });
    await createRoom({ participants: [human(newUserId())] });
    const reply = await call('GET', '/user/rooms', { headers: await humanHeaders(user) });
    expect(reply.status).toBe(200);
    expect(reply.body.map((room: any) => room.roomId).sort()).toEqual([mine.roomId, alsoMine.roomId].sort());
    const agentRooms = await call('GET', '/user/rooms', { apiKey: agent.apiKey });
    expect(agentRooms.body.map((room: any) => room.roomId)).toEqual([mine.roomId]);
    expectError(await call('GET', '/user/rooms'), 401, 'UNAUTHENTICATED');
    expectError(await call('GET', '/user/rooms', { apiKey: 'admin' }), 403, 'FORBIDDEN');
  });
});

describe('participants', () => {
  it('adds a participant once (201, then 200), refuses a full room and removes one', async () => {
    const room = await createRoom({ maxParticipants: 2, participants: [human('first')] });
    const added = await call('POST', `/rooms/${room.roomId}/participants`, { apiKey: 'admin', body: human('second') });
    expect(added.status).toBe(201);
    expect(added.body.participants).toEqual([human('first'), human('second')]);
    expect(added.body.updatedAt >= room.updatedAt).toBe(true);
    expect(
      (await call('POST', `/rooms/${room.roomId}/participants`, { apiKey: 'admin', body: human('second') })).status,
    ).toBe(200);
    expectError(
      await call('POST', `/rooms/${room.roomId}/participants`, { apiKey: 'admin', body: human('third') }),
      409,
      'CONFLICT',
    );

    const removed = await call('DELETE', `/rooms/${room.roomId}/participants/first`, { apiKey: 'admin' });
    expect(removed.status).toBe(200);
    expect(removed.body.participants).toEqual([human('second')]);
    expectError(
      await call('DELETE', `/rooms/${room.roomId}/participants/first`, { apiKey: 'admin' }),
      404,
      'NOT_FOUND',
    );
    expect((await call('GET', `/rooms/${room.roomId}`)).body.participants).toEqual([human('second')]);
  });

  it('adds a registered agent and refuses an unknown one', async () => {
    const room = await createRoom();
    const agent = await registerAgent();
    const added = await call('POST', `/rooms/${room.roomId}/participants`, {
      apiKey: 'admin',
      body: { type: 'AGENT', participantId: agent.agentId },
    });
    expect(added.status).toBe(201);
    const unknown = await call('POST', `/rooms/${room.roomId}/participants`, {
      apiKey: 'admin',
      body: { type: 'AGENT', participantId: 'nobody' },
    });
    expectError(unknown, 404, 'AGENT_NOT_FOUND');
  });

  it('answers 400, 401, 403 and 404 where they apply', async () => {
    const room = await createRoom();
    const path = `/rooms/${room.roomId}/participants`;
    expectError(await call('POST', path, { apiKey: 'admin', body: { type: 'HUMAN' } }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', path, { body: human('x') }), 401, 'UNAUTHENTICATED');
    expectError(await call('POST', path, { headers: await humanHeaders('x'), body: human('x') }), 403, 'FORBIDDEN');
    expectError(await call('DELETE', `${path}/x`, { headers: await humanHeaders('x') }), 403, 'FORBIDDEN');
    expectError(
      await call('POST', '/rooms/no-such-room/participants', { apiKey: 'admin', body: human('x') }),
      404,
      'NOT_FOUND',
    );
    expectError(await call('DELETE', '/rooms/no-such-room/participants/x', { apiKey: 'admin' }), 404, 'NOT_FOUND');
  });
});

describe('messages over HTTP', () => {
  it('sends as the caller and answers the stored message', async () => {
    const user = newUserId();
    const room = await createRoom({ participants: [human(user)] });
    const reply = await call('POST', `/rooms/${room.roomId}/messages`, {
      headers: await humanHeaders(user),
      body: { content: 'hello', metadata: { 'x.y': 1 } },
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      type: 'MESSAGE',
      data: {
        id: expect.stringMatching(UUID),
        roomId: room.roomId,
        seq: 1,
        content: 'hello',
        sender: { type: 'HUMAN', id: user },
        timestamp: expect.stringMatching(ISO),
        metadata: { 'x.y': 1 },
      },
    });
    const agent = await registerAgent();
    const fromAgent = await call('POST', `/rooms/${room.roomId}/messages`, {
      apiKey: agent.apiKey,
      body: { content: 'beep' },
    });
    expect(fromAgent.body.data).toMatchObject({ seq: 2, sender: { type: 'AGENT', id: agent.agentId } });
    const history = await call('GET', `/rooms/${room.roomId}/messages`);
    expect(history.body).toEqual([reply.body, fromAgent.body]);
  });

  it('answers 400, 401, 403, 404 and 413 where they apply', async () => {
    const member = newUserId();
    const room = await createRoom({ private: true, participants: [human(member)] });
    const path = `/rooms/${room.roomId}/messages`;
    const headers = await humanHeaders(member);
    expectError(await call('POST', path, { body: { content: 'x' } }), 401, 'UNAUTHENTICATED');
    expectError(
      await call('POST', path, { headers: await humanHeaders(newUserId()), body: { content: 'x' } }),
      404,
      'NOT_FOUND',
    );
    expectError(await call('POST', path, { apiKey: 'admin', body: { content: 'x' } }), 403, 'FORBIDDEN');
    expectError(
      await call('POST', '/rooms/no-such-room/messages', { headers, body: { content: 'x' } }),
      404,
      'NOT_FOUND',
    );
    for (const body of [
      {},
      { content: '' },
      { content: '   ' },
      { content: 5 },
      { content: 'x', metadata: 'y' },
      { content: 'x', extra: 1 },
    ]) {
      expectError(await call('POST', path, { headers, body }), 400, 'VALIDATION_ERROR');
    }
    expectError(await call('POST', path, { headers, body: { content: 'x'.repeat(16_385) } }), 413, 'PAYLOAD_TOO_LARGE');
    expect((await call('POST', path, { headers, body: { content: '😀'.repeat(16_384) } })).status).toBe(201);
    expect((await call('GET', path, { headers })).body).toHaveLength(1);
  });
});

describe('GET /rooms/{roomId}/messages', () => {
  it('pages back with before and forward with after, in chronological order', async () => {
    const user = newUserId();
    const room = await createRoom({ participants: [human(user)] });
    const sent: any[] = [];
    for (let index = 1; index <= 7; index++) sent.push(await post(room.roomId, user, `m${index}`));
    expect(sent.map((message) => message.data.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const contents = (reply: { body: any[] }) => reply.body.map((message) => message.data.content);

    expect(contents(await call('GET', `/rooms/${room.roomId}/messages`))).toEqual([
      'm1',
      'm2',
      'm3',
      'm4',
      'm5',
      'm6',
      'm7',
    ]);
    expect(contents(await call('GET', `/rooms/${room.roomId}/messages?limit=3`))).toEqual(['m5', 'm6', 'm7']);
    expect(contents(await call('GET', `/rooms/${room.roomId}/messages?limit=3&before=${sent[4].data.id}`))).toEqual([
      'm2',
      'm3',
      'm4',
    ]);
    expect(contents(await call('GET', `/rooms/${room.roomId}/messages?limit=3&before=${sent[1].data.id}`))).toEqual([
      'm1',
    ]);
    expect(contents(await call('GET', `/rooms/${room.roomId}/messages?limit=3&after=2`))).toEqual(['m3', 'm4', 'm5']);
    expect(contents(await call('GET', `/rooms/${room.roomId}/messages?after=7`))).toEqual([]);
  });

  it('keeps private history to participants, its creator and admin; public history needs no credential', async () => {
    const member = newUserId();
    const closed = await createRoom({ private: true, participants: [human(member)] });
    await post(closed.roomId, member, 'secret');
    const path = `/rooms/${closed.roomId}/messages`;
    const anonymous = await call('GET', path);
    expectError(anonymous, 404, 'NOT_FOUND');
    expect(anonymous.body).toEqual((await call('GET', '/rooms/no-such-room/messages')).body);
    expectError(await call('GET', path, { headers: await humanHeaders(newUserId()) }), 404, 'NOT_FOUND');
    const agent = await registerAgent();
    expectError(await call('GET', path, { apiKey: agent.apiKey }), 404, 'NOT_FOUND');
    expect((await call('GET', path, { headers: await humanHeaders(member) })).body).toHaveLength(1);
    expect((await call('GET', path, { apiKey: 'admin' })).body).toHaveLength(1);

    const open = await createRoom();
    await post(open.roomId, member, 'hello all');
    expect((await call('GET', `/rooms/${open.roomId}/messages`)).body).toHaveLength(1);
  });

  it('answers 400 for bad paging and 404 for an unknown room', async () => {
    const user = newUserId();
    const room = await createRoom({ participants: [human(user)] });
    const other = await createRoom({ participants: [human(user)] });
    const elsewhere = await post(other.roomId, user, 'elsewhere');
    const path = `/rooms/${room.roomId}/messages`;
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=x',
      'after=-1',
      'after=x',
      'before=no-such-message',
      `before=${elsewhere.data.id}`,
      'before=a&after=1',
      'sort=desc',
    ]) {
      expectError(await call('GET', `${path}?${query}`), 400, 'VALIDATION_ERROR');
    }
    expectError(await call('GET', '/rooms/no-such-room/messages'), 404, 'NOT_FOUND');
  });
});
