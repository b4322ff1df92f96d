import { useTestDatabase } from '../support/database';
import { call } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';
import { createRoom } from '../support/room-client';
import { useSecondApi } from '../support/second-api';

/** GET /rooms and GET /user/rooms come from each process's in-memory listing (src/rooms/room-directory.ts): a change through one process shows in the other's next answer. */
const database = useTestDatabase();
const secondUrl = useSecondApi('room-lists');

const human = (id: string) => ({ type: 'HUMAN', participantId: id });
const changeCount = async () =>
  (
    await database()
      .collection('change_counters')
      .findOne({ _id: 'rooms' as never })
  )?.seq;

/** Every public room's id, page by page through `baseUrl`; bounded. */
async function publicRoomIds(baseUrl: string | undefined): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 0; page < 1_000; page += 1) {
    const after = ids.length > 0 ? `&after=${ids.at(-1)}` : '';
    const reply = await call('GET', `/rooms?limit=100${after}`, { baseUrl });
    expect(reply.status).toBe(200);
    if (reply.body.length === 0) return ids;
    ids.push(...reply.body.map((room: { roomId: string }) => room.roomId));
  }
  throw new Error('paging did not end');
}

async function userRoomIds(baseUrl: string | undefined, user: string): Promise<string[]> {
  const reply = await call('GET', '/user/rooms', { headers: await humanHeaders(user), baseUrl });
  expect(reply.status).toBe(200);
  return reply.body.map((room: { roomId: string }) => room.roomId);
}

describe('room lists across two API processes', () => {
  it('list a public room created through the other process from the next request on, in id order, and never a private one', async () => {
    const listedBefore = await publicRoomIds(secondUrl());
    const changesBefore = await changeCount();
    const [open, closed] = [await createRoom({ private: false }), await createRoom({ private: true })];
    expect(await changeCount()).toBeGreaterThan(changesBefore ?? 0);
    const listed = await publicRoomIds(secondUrl());
    expect(listed).toContain(open.roomId);
    expect(listed).not.toContain(closed.roomId);
    expect([...listed].sort()).toEqual(listed);
    // Other test files create rooms on the shared stack meanwhile: what is new must be public, not only this one.
    const appeared = listed.filter((roomId) => !listedBefore.includes(roomId));
    expect(appeared).toContain(open.roomId);
    for (const roomId of appeared)
      expect((await call('GET', `/rooms/${roomId}`, { apiKey: 'admin' })).body).toMatchObject({ private: false });
    const page = await call('GET', '/rooms?limit=1', { baseUrl: secondUrl() });
    expect(page.body).toHaveLength(1);
    expect(page.body[0]).toMatchObject({ roomId: listed[0], private: false });
  });

  it("list a participant's rooms as participants are added and removed through the other process", async () => {
    const user = newUserId();
    const room = await createRoom({ private: true });
    expect(await userRoomIds(secondUrl(), user)).toEqual([]);
    expect(
      (await call('POST', `/rooms/${room.roomId}/participants`, { apiKey: 'admin', body: human(user) })).status,
    ).toBe(201);
    expect(await userRoomIds(secondUrl(), user)).toEqual([room.roomId]);
    const listed = await call('GET', '/user/rooms', { headers: await humanHeaders(user), baseUrl: secondUrl() });
    expect(listed.body[0].participants).toEqual([human(user)]);
    expect(
      (await call('DELETE', `/rooms/${room.roomId}/participants/${user}`, { apiKey: 'admin', baseUrl: secondUrl() }))
        .status,
    ).toBe(200);
    expect(await userRoomIds(undefined, user)).toEqual([]);
  });
});
