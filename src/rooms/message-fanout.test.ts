import { loadConfig } from '../config/config';
import type { Logger } from '../ops/logger';
import type { Store } from '../store/mongo';
import { GAP_WAIT_MS, MessagePoll, startMessageFanout } from './message-fanout';
import type { Message, MessageStore, PageCursor } from './message-store';
import type { RoomHub } from './room-hub';

const ROOM = 'room-1';
const message = (seq: number) =>
  ({
    id: `m${seq}`,
    roomId: ROOM,
    seq,
    content: `c${seq}`,
    sender: { type: 'HUMAN', id: 'u' },
    timestamp: new Date(0),
  }) as Message;

/** A room's stored messages and what the poll published, without MongoDB. */
function setUp(initial: number[]) {
  const stored = initial.map(message);
  const published: number[] = [];
  const lastSeq = async () => Math.max(0, ...stored.map((stored) => stored.seq));
  const messages = {
    lastSeq,
    reservedSeq: lastSeq,
    page: async (_roomId: string, cursor: PageCursor) =>
      stored.filter((stored) => cursor.kind === 'after' && stored.seq > cursor.seq).sort((a, b) => a.seq - b.seq),
  } as unknown as MessageStore;
  const seen = new Set<number>();
  /** Seqs this process reserved for its own messages. */
  const own = new Set<number>();
  const life = { generation: 1 };
  const hub = {
    connectedRooms: () => [{ roomId: ROOM, generation: life.generation }],
    accountsFor: (_roomId: string, after: number, through: number) => {
      for (let seq = after + 1; seq <= through; seq += 1) if (!seen.has(seq) && !own.has(seq)) return false;
      return true;
    },
    publishStored: (stored: Message) => {
      if (!seen.has(stored.seq)) published.push(stored.seq);
      seen.add(stored.seq);
    },
  } as unknown as RoomHub;
  return {
    poll: new MessagePoll(messages, hub),
    messages,
    hub,
    store: (...seqs: number[]) => stored.push(...seqs.map(message)),
    own,
    published,
    life,
  };
}

/** A server whose `hello` answers as a replica set member (MongoDB) or without a set name (a standalone server). */
function server(replicaSet: boolean) {
  const command = jest.fn(async () =>
    replicaSet ? { isWritablePrimary: true, setName: 'rs0' } : { isWritablePrimary: true },
  );
  return { store: { db: { command } } as unknown as Store, command };
}

const logger = { info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as Logger;

describe('the message fan-out', () => {
  function withStream() {
    const { messages, hub } = setUp([]);
    const close = jest.fn(async () => undefined);
    const watchInserts = jest.fn(() => close);
    Object.assign(messages, { watchInserts });
    return { messages, hub, watchInserts, close };
  }

  it('polls by default, even on a replica set, without asking the server', async () => {
    const { store, command } = server(true);
    const { messages, hub, watchInserts } = withStream();
    const fanout = await startMessageFanout(store, messages, hub, logger, loadConfig({}).roomFanout);
    await fanout.stop();
    expect(fanout.mode).toBe('poll');
    expect(watchInserts).not.toHaveBeenCalled();
    expect(command).not.toHaveBeenCalled();
  });

  it('opens a change stream on a replica set when ROOM_FANOUT=change-streams', async () => {
    const { store } = server(true);
    const { messages, hub, watchInserts, close } = withStream();
    const fanout = await startMessageFanout(
      store,
      messages,
      hub,
      logger,
      loadConfig({ ROOM_FANOUT: 'change-streams' }).roomFanout,
    );
    expect(fanout.mode).toBe('change-streams');
    expect(watchInserts).toHaveBeenCalledTimes(1);
    await fanout.stop();
    expect(close).toHaveBeenCalledTimes(1);
  });

  it('refuses to start with ROOM_FANOUT=change-streams on a server without a replica set', async () => {
    const { store } = server(false);
    const { messages, hub, watchInserts } = withStream();
    await expect(startMessageFanout(store, messages, hub, logger, 'change-streams')).rejects.toThrow(
      /ROOM_FANOUT=change-streams needs a MongoDB replica set/,
    );
    expect(watchInserts).not.toHaveBeenCalled();
  });
});

describe('the message poll', () => {
  afterEach(() => jest.restoreAllMocks());

  it("starts at the room's last seq, then publishes what is stored after it", async () => {
    const { poll, store, published } = setUp([1, 2]);
    await poll.once();
    store(3, 4);
    await poll.once();
    expect(published).toEqual([3, 4]);
  });

  it('reads no page while every new seq is one this process reserved itself', async () => {
    const { poll, messages, store, own, published } = setUp([1]);
    await poll.once();
    const page = jest.spyOn(messages, 'page');
    own.add(2).add(3);
    store(2, 3);
    await poll.once();
    expect(page).not.toHaveBeenCalled();
    expect(published).toEqual([]);
    store(4);
    await poll.once();
    expect(page).toHaveBeenCalledTimes(1);
    expect(published).toEqual([4]);
  });

  it('starts again at the present when the room was left by all and joined again between two rounds', async () => {
    const { poll, store, published, life } = setUp([1]);
    await poll.once();
    store(2);
    life.generation = 2;
    await poll.once();
    store(3);
    await poll.once();
    expect(published).toEqual([3]);
  });

  it('waits for a missing seq stored late by another process, and gives it up after GAP_WAIT_MS', async () => {
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const { poll, store, published } = setUp([1]);
    await poll.once();
    store(3);
    await poll.once();
    store(2);
    await poll.once();
    expect(published).toEqual([3, 2]);

    store(5);
    await poll.once();
    now += GAP_WAIT_MS + 1;
    await poll.once();
    store(4, 6);
    await poll.once();
    // Past the wait, seq 4 is no longer looked for: the cursor moved to 5.
    expect(published).toEqual([3, 2, 5, 6]);
  });
});
