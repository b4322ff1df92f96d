import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';
import {
  createRoom,
  isError,
  isMessage,
  isSystem,
  refusedHandshake,
  refusedHandshakeAt,
  RoomClient,
  roomSocketUrl,
} from '../support/room-client';
import { testStack } from '../support/test-stack';

const human = (id: string) => ({ type: 'HUMAN', participantId: id });
const open: RoomClient[] = [];
async function connect(...args: Parameters<typeof RoomClient.connect>): Promise<RoomClient> {
  const client = await RoomClient.connect(...args);
  open.push(client);
  return client;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

describe('room WebSocket handshake', () => {
  it('accepts an agent key as api-key or apiKey, and human tokens with or without Bearer', async () => {
    const agent = await registerAgent();
    const user = newUserId();
    const room = await createRoom({
      private: true,
      participants: [human(user), { type: 'AGENT', participantId: agent.agentId }],
    });
    const variants = [
      { apiKey: agent.apiKey, parameter: 'api-key' as const },
      { apiKey: agent.apiKey, parameter: 'apiKey' as const },
      { human: user, bearer: true },
      { human: user, bearer: false },
    ];
    for (const credential of variants) {
      const client = await connect(room.roomId, credential);
      client.sendMessage(`hello via ${JSON.stringify(Object.keys(credential))}`);
      const echoed = await client.waitFor(isMessage());
      expect(echoed.data.sender).toEqual(
        'apiKey' in credential ? { type: 'AGENT', id: agent.agentId } : { type: 'HUMAN', id: user },
      );
      await client.close();
    }
  });

  it('refuses without credential or with a bad one (401), before upgrading', async () => {
    const room = await createRoom();
    for (const credential of [{ none: true as const }, { apiKey: 'acs_not_a_real_key' }]) {
      const refused = await refusedHandshake(room.roomId, credential);
      expect(refused).toEqual({
        status: 401,
        body: { error: { code: 'UNAUTHENTICATED', message: expect.any(String) } },
      });
    }
    // Alike for a private room and an unknown one: the refusal comes before the room is looked up.
    const hidden = await createRoom({ private: true });
    expect(await refusedHandshake(hidden.roomId, { none: true })).toEqual(
      await refusedHandshake('no-such-room', { none: true }),
    );
    const sessionOnly = new URL(await roomSocketUrl(room.roomId, { human: 'x' }));
    sessionOnly.searchParams.delete('X-Identity-Token');
    expect((await refusedHandshakeAt(sessionOnly.toString())).status).toBe(401);
  });

  it('refuses the identity token in place of the session token (401), as over HTTP', async () => {
    const user = newUserId();
    const room = await createRoom({ private: true, participants: [human(user)] });
    const url = new URL(await roomSocketUrl(room.roomId, { human: user }));
    url.searchParams.set('Authorization', `Bearer ${url.searchParams.get('X-Identity-Token')}`);
    expect(await refusedHandshakeAt(url.toString())).toEqual({
      status: 401,
      body: { error: { code: 'UNAUTHENTICATED', message: expect.any(String) } },
    });
  });

  it('refuses an unknown room (404), a private room to others (404 alike: it is not admitted to exist) and admin keys (403)', async () => {
    const unknown = await refusedHandshake('no-such-room', { human: newUserId() });
    expect(unknown).toEqual({ status: 404, body: { error: { code: 'NOT_FOUND', message: 'Room not found' } } });
    const room = await createRoom({ private: true, participants: [human('member')] });
    expect(await refusedHandshake(room.roomId, { human: newUserId() })).toEqual(unknown);
    expect(await refusedHandshake(room.roomId, { apiKey: (await registerAgent()).apiKey })).toEqual(unknown);
    expect((await refusedHandshake(room.roomId, { apiKey: testStack().adminKey })).status).toBe(403);
  });

  it('refuses a room id that is not valid percent-encoding as an unknown room (404)', async () => {
    const apiKey = (await registerAgent()).apiKey;
    for (const roomId of ['%', '%E0%A4%A']) {
      expect(await refusedHandshakeAt(`${testStack().wsUrl}/parties/chat-server/${roomId}?api-key=${apiKey}`)).toEqual({
        status: 404,
        body: { error: { code: 'NOT_FOUND', message: 'Room not found' } },
      });
    }
  });

  it('refuses a bad since (400) and an unknown path (404)', async () => {
    const room = await createRoom();
    expect((await refusedHandshake(room.roomId, { human: newUserId() }, { since: -1 })).status).toBe(400);
    expect((await refusedHandshakeAt(`${testStack().wsUrl}/parties/other-server/${room.roomId}`)).status).toBe(404);
  });

  it('lets at most maxParticipants distinct participants in; a second connection of one of them is fine', async () => {
    const [first, second] = [newUserId(), newUserId()];
    const room = await createRoom({ maxParticipants: 1 });
    await connect(room.roomId, { human: first });
    await connect(room.roomId, { human: first });
    const refused = await refusedHandshake(room.roomId, { human: second });
    expect(refused).toEqual({
      status: 403,
      body: { error: { code: 'FORBIDDEN', message: expect.stringContaining('full') } },
    });
  });
});

describe('room WebSocket frames', () => {
  it('tells everyone connected when a participant joins and leaves', async () => {
    const [alice, bob] = [newUserId(), newUserId()];
    const room = await createRoom();
    const first = await connect(room.roomId, { human: alice });
    const joinedSelf = await first.waitFor(isSystem('participant_joined', alice));
    expect(joinedSelf.data).toEqual({
      id: expect.any(String),
      roomId: room.roomId,
      event: 'participant_joined',
      participant: { type: 'HUMAN', id: alice },
      timestamp: expect.any(String),
    });
    const second = await connect(room.roomId, { human: bob });
    await first.waitFor(isSystem('participant_joined', bob));
    await second.waitFor(isSystem('participant_joined', bob));
    await second.close();
    const left = await first.waitFor(isSystem('participant_left', bob));
    expect(left.data.participant).toEqual({ type: 'HUMAN', id: bob });
  });

  it('stores a message, then broadcasts it to every participant, the sender included', async () => {
    const agent = await registerAgent();
    const user = newUserId();
    const room = await createRoom({
      private: true,
      participants: [human(user), { type: 'AGENT', participantId: agent.agentId }],
    });
    const person = await connect(room.roomId, { human: user });
    const bot = await connect(room.roomId, { apiKey: agent.apiKey });
    bot.sendMessage('hi there', { 'lang.code': 'en' });
    const [atBot, atPerson] = await Promise.all([
      bot.waitFor(isMessage('hi there')),
      person.waitFor(isMessage('hi there')),
    ]);
    expect(atBot).toEqual(atPerson);
    expect(atBot.data).toEqual({
      id: expect.any(String),
      roomId: room.roomId,
      seq: 1,
      content: 'hi there',
      sender: { type: 'AGENT', id: agent.agentId },
      timestamp: expect.any(String),
      metadata: { 'lang.code': 'en' },
    });
    const history = await call('GET', `/rooms/${room.roomId}/messages`, { apiKey: agent.apiKey });
    expect(history.body).toEqual([atBot]);
  });

  it("delivers one sender's messages in the order sent, with increasing seq; HTTP messages join the same sequence", async () => {
    const [alice, bob] = [newUserId(), newUserId()];
    const room = await createRoom();
    const sender = await connect(room.roomId, { human: alice });
    const reader = await connect(room.roomId, { human: bob });
    const contents = Array.from({ length: 40 }, (_, index) => `n${index}`);
    for (const content of contents) sender.sendMessage(content);
    const received = await reader.waitForCount(isMessage(), contents.length);
    expect(received.map((frame) => frame.data.content)).toEqual(contents);
    expect(received.map((frame) => frame.data.seq)).toEqual(contents.map((_, index) => index + 1));
    const posted = await call('POST', `/rooms/${room.roomId}/messages`, {
      apiKey: (await registerAgent()).apiKey,
      body: { content: 'over http' },
    });
    expect((await reader.waitFor(isMessage('over http'))).data.seq).toBe(posted.body.data.seq);
  });

  it.each([
    ['malformed JSON', '{"type": "MESSAGE", ', 'VALIDATION_ERROR'],
    ['a frame that is not an object', '"MESSAGE"', 'VALIDATION_ERROR'],
    ['a frame without type', { data: { content: 'x' } }, 'VALIDATION_ERROR'],
    ['an unknown type', { type: 'SHOUT', data: { content: 'x' } }, 'VALIDATION_ERROR'],
    ['a MESSAGE without data', { type: 'MESSAGE' }, 'VALIDATION_ERROR'],
    ['empty content', { type: 'MESSAGE', data: { content: '' } }, 'VALIDATION_ERROR'],
    ['blank content', { type: 'MESSAGE', data: { content: ' \n ' } }, 'VALIDATION_ERROR'],
    ['content that is not a string', { type: 'MESSAGE', data: { content: 42 } }, 'VALIDATION_ERROR'],
    ['metadata that is not an object', { type: 'MESSAGE', data: { content: 'x', metadata: [] } }, 'VALIDATION_ERROR'],
    ['content over MAX_MESSAGE_CHARS', { type: 'MESSAGE', data: { content: 'x'.repeat(16_385) } }, 'PAYLOAD_TOO_LARGE'],
  ])('answers %s with an ERROR frame and keeps the connection open', async (_case, frame, code) => {
    const room = await createRoom();
    const client = await connect(room.roomId, { human: newUserId() });
    client.send(frame);
    const error = await client.waitFor(isError);
    expect(error).toEqual({ type: 'ERROR', data: { code, message: expect.any(String) } });
    client.sendMessage('still here');
    await client.waitFor(isMessage('still here'));
    expect(client.frames.filter(isMessage())).toHaveLength(1);
    expect((await call('GET', `/rooms/${room.roomId}/messages`)).body).toHaveLength(1);
  });

  it('answers a binary frame with an ERROR frame', async () => {
    const room = await createRoom();
    const client = await connect(room.roomId, { human: newUserId() });
    client.ws.send(Buffer.from('{"type":"MESSAGE","data":{"content":"x"}}'), { binary: true });
    expect((await client.waitFor(isError)).data.code).toBe('VALIDATION_ERROR');
  });

  it('answers a frame nested deeper than 100 levels with a VALIDATION_ERROR frame and stays open', async () => {
    const room = await createRoom();
    const client = await connect(room.roomId, { human: newUserId() });
    client.ws.send(`{"type":"MESSAGE","data":{"content":"x","metadata":${'{"a":'.repeat(5000)}{}${'}'.repeat(5000)}}}`);
    const error = await client.waitFor(isError);
    expect(error.data).toMatchObject({ code: 'VALIDATION_ERROR', message: 'Frames must nest at most 100 levels deep' });
    expect(client.ws.readyState).toBe(client.ws.OPEN);
  });

  it('closes a connection whose frame exceeds maxPayload (1 MiB) with 1009', async () => {
    const room = await createRoom();
    const client = await connect(room.roomId, { human: newUserId() });
    client.send({ type: 'MESSAGE', data: { content: 'x'.repeat(1024 * 1024 + 1) } });
    expect((await client.closed).code).toBe(1009);
  });
});

describe('private room membership', () => {
  it('disconnects a participant removed from a private room (4403) and refuses it afterwards', async () => {
    const [staying, leaving] = [newUserId(), newUserId()];
    const room = await createRoom({ private: true, participants: [human(staying), human(leaving)] });
    const stays = await connect(room.roomId, { human: staying });
    const removed = await connect(room.roomId, { human: leaving });
    await stays.waitFor(isSystem('participant_joined', leaving));
    expect((await call('DELETE', `/rooms/${room.roomId}/participants/${leaving}`, { apiKey: 'admin' })).status).toBe(
      200,
    );
    expect((await removed.closed).code).toBe(4403);
    await stays.waitFor(isSystem('participant_left', leaving));
    expect((await refusedHandshake(room.roomId, { human: leaving })).status).toBe(404);
  });
});

describe('resuming with since', () => {
  it('sends every stored message after since, in order, then live ones, without gap or duplicate', async () => {
    const [alice, bob] = [newUserId(), newUserId()];
    const room = await createRoom();
    for (let index = 1; index <= 5; index++) {
      await call('POST', `/rooms/${room.roomId}/messages`, {
        headers: await humanHeaders(alice),
        body: { content: `old${index}` },
      });
    }
    const writer = await connect(room.roomId, { human: alice });
    // Messages keep arriving while the reader resumes: the boundary between history and live is exercised.
    for (let index = 1; index <= 20; index++) writer.sendMessage(`live${index}`);
    const reader = await connect(room.roomId, { human: bob }, { since: 2 });
    writer.sendMessage('after');
    const received = await reader.waitFor(isMessage('after')).then(() => reader.frames.filter(isMessage()));
    const seqs = received.map((frame) => frame.data.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 3));
    expect(received.map((frame) => frame.data.content)).toEqual([
      'old3',
      'old4',
      'old5',
      ...Array.from({ length: 20 }, (_, index) => `live${index + 1}`),
      'after',
    ]);
  });

  it('with since=0 replays the whole history; with since at the end, nothing', async () => {
    const user = newUserId();
    const room = await createRoom();
    const writer = await connect(room.roomId, { human: user });
    for (const content of ['a', 'b', 'c']) writer.sendMessage(content);
    await writer.waitForCount(isMessage(), 3);
    const all = await connect(room.roomId, { human: newUserId() }, { since: 0 });
    expect((await all.waitForCount(isMessage(), 3)).map((frame) => frame.data.content)).toEqual(['a', 'b', 'c']);
    const none = await connect(room.roomId, { human: newUserId() }, { since: 3 });
    writer.sendMessage('d');
    await none.waitFor(isMessage('d'));
    expect(none.frames.filter(isMessage()).map((frame) => frame.data.content)).toEqual(['d']);
  });
});
