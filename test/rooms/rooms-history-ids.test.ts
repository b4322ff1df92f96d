import { randomUUID } from 'node:crypto';
import { messageId } from '../../src/rooms/message-ids';
import { call } from '../support/http';
import { useTestDatabase } from '../support/database';
import { humanHeaders, newUserId } from '../support/humans';
import { createRoom } from '../support/room-client';
import { startSecondApi } from '../support/second-api';
import type { ServiceProcess } from '../support/service-process';

/** History read by `_id` lookups of seqs (src/rooms/message-ids.ts): holes, cursors, and messages stored before ids were derived. */
const database = useTestDatabase();
let second: ServiceProcess | undefined;

afterAll(() => second?.stop());

const contents = (reply: { body: any[] }) => reply.body.map((message) => message.data.content);

/** Posts as a human to a public room, in order; the stored messages. */
async function postAll(roomId: string, texts: string[]): Promise<any[]> {
  const headers = await humanHeaders(newUserId());
  const sent = [];
  for (const content of texts) {
    const reply = await call('POST', `/rooms/${roomId}/messages`, { headers, body: { content } });
    expect(reply.status).toBe(201);
    sent.push(reply.body);
  }
  return sent;
}

/** Reserves `count` seqs of the room that will never hold a message, as a failed insert leaves them. */
async function leaveHoles(roomId: string, count: number): Promise<void> {
  await database()
    .collection('room_sequences')
    .updateOne({ _id: roomId as any }, { $inc: { seq: count } });
}

describe('room history', () => {
  it('stores each message under an _id derived from its room and seq', async () => {
    const room = await createRoom();
    const [first] = await postAll(room.roomId, ['one']);
    expect(first.data.id).toBe(messageId(room.roomId, 1));
    expect(first.data.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const stored = await database().collection('messages').findOne({ _id: first.data.id });
    expect(stored).toMatchObject({ roomId: room.roomId, seq: 1, content: 'one' });
  });

  it('pages across seqs that hold no message, in both directions', async () => {
    const room = await createRoom();
    const early = await postAll(room.roomId, ['m1', 'm2', 'm3']);
    await leaveHoles(room.roomId, 40);
    const late = await postAll(room.roomId, ['m4', 'm5', 'm6']);
    expect(late.map((message) => message.data.seq)).toEqual([44, 45, 46]);
    await leaveHoles(room.roomId, 5);
    const path = `/rooms/${room.roomId}/messages`;

    expect(contents(await call('GET', `${path}?limit=4`))).toEqual(['m3', 'm4', 'm5', 'm6']);
    expect(contents(await call('GET', path))).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);
    expect(contents(await call('GET', `${path}?limit=2&before=${late[0].data.id}`))).toEqual(['m2', 'm3']);
    expect(contents(await call('GET', `${path}?limit=2&before=${early[0].data.id}`))).toEqual([]);
    expect(contents(await call('GET', `${path}?limit=2&after=2`))).toEqual(['m3', 'm4']);
    expect(contents(await call('GET', `${path}?after=3`))).toEqual(['m4', 'm5', 'm6']);
    expect(contents(await call('GET', `${path}?after=46`))).toEqual([]);
  });

  it("refuses a before naming another room's message or none", async () => {
    const [room, other] = [await createRoom(), await createRoom()];
    await postAll(room.roomId, ['here']);
    const [elsewhere] = await postAll(other.roomId, ['there']);
    for (const before of [elsewhere.data.id, messageId(room.roomId, 9), randomUUID()]) {
      const reply = await call('GET', `/rooms/${room.roomId}/messages?before=${encodeURIComponent(before)}`);
      expect({ status: reply.status, code: reply.body.error?.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
    }
  });

  it('reads messages stored with random ids once a start has given them derived ones, under their old ids', async () => {
    const room = await createRoom();
    const oldIds = [randomUUID(), randomUUID(), randomUUID()];
    const timestamp = new Date();
    const sender = { type: 'HUMAN', id: 'user-old' };
    await database()
      .collection('messages')
      .insertMany(
        oldIds.map((id, index) => ({
          _id: id as any,
          roomId: room.roomId,
          seq: index + 1,
          content: `old${index + 1}`,
          sender,
          timestamp,
        })),
      );
    await database().collection('room_sequences').insertOne({ _id: room.roomId, seq: 3 });
    // The test stack's start has migrated already: forget that, so the next start looks again.
    await database().collection('migrations').deleteMany({});

    const started = await startSecondApi('history-ids');
    second = started.process;
    const baseUrl = `http://127.0.0.1:${started.port}`;
    await postAll(room.roomId, ['new4']);

    const history = await call('GET', `/rooms/${room.roomId}/messages`, { baseUrl });
    expect(history.body.map((message: any) => [message.data.id, message.data.content])).toEqual([
      [oldIds[0], 'old1'],
      [oldIds[1], 'old2'],
      [oldIds[2], 'old3'],
      [messageId(room.roomId, 4), 'new4'],
    ]);
    expect(contents(await call('GET', `/rooms/${room.roomId}/messages?before=${oldIds[2]}`, { baseUrl }))).toEqual([
      'old1',
      'old2',
    ]);
    const stored = await database().collection('messages').find({ roomId: room.roomId }).sort({ seq: 1 }).toArray();
    expect(stored.map((message) => message._id)).toEqual([1, 2, 3, 4].map((seq) => messageId(room.roomId, seq)));
    expect(
      await database()
        .collection('migrations')
        .countDocuments({ _id: 'message-ids-derived-from-room-and-seq' as never }),
    ).toBe(1);
  });
});
