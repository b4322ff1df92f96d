import { randomUUID } from 'node:crypto';
import { ParticipantType } from '../../src/auth/participant';
import { PRESENCE_PROCESSES_COLLECTION, PresenceLookup, SocketPresence } from '../../src/room-tasks/socket-presence';
import { Store } from '../../src/store/mongo';
import { testStack } from '../support/test-stack';

/** Presence records count only while their API process's heartbeat is fresh. */
describe('socket presence on FerretDB', () => {
  let store: Store;
  let lookup: PresenceLookup;

  beforeAll(async () => {
    const stack = testStack();
    store = await Store.connect(stack.mongoUri, `${stack.mongoDatabase}_presence_test`);
    lookup = new PresenceLookup(store);
  });
  afterAll(async () => {
    await store.db.dropDatabase();
    await store.close();
  });

  it('finds the sockets of live processes only, and forgets a process that cleared its records', async () => {
    const roomId = randomUUID();
    const agent = { type: ParticipantType.AGENT, id: `agent-${randomUUID()}` };
    const other = { type: ParticipantType.AGENT, id: `agent-${randomUUID()}` };
    const live = new SocketPresence(store, `live-${randomUUID()}`);
    const silent = new SocketPresence(store, `silent-${randomUUID()}`);
    const stale = new SocketPresence(store, `stale-${randomUUID()}`);

    await live.refresh();
    await live.arrived(roomId, agent);
    // Never beat: a process that died before its first heartbeat.
    await silent.arrived(roomId, agent);
    // Beat a minute ago, then went silent.
    await stale.refresh();
    await store
      .collection<{ _id: string; seenAt: Date }>(PRESENCE_PROCESSES_COLLECTION)
      .updateOne({ _id: stale.queue }, { $set: { seenAt: new Date(Date.now() - 60_000) } });
    await stale.arrived(roomId, other);

    expect(await lookup.queueOf(roomId, agent)).toBe(live.queue);
    expect(await lookup.queueOf(roomId, other)).toBeNull();
    expect(await lookup.queuesOf(roomId)).toEqual([live.queue]);

    await live.departed(roomId, agent);
    expect(await lookup.queueOf(roomId, agent)).toBeNull();
    await live.arrived(roomId, agent);
    await live.clear();
    expect(await lookup.queuesOf(roomId)).toEqual([]);
  });
});
