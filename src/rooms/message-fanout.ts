import type { RoomFanout } from '../config/config';
import type { Logger } from '../ops/logger';
import type { Store } from '../store/mongo';
import type { MessageStore } from './message-store';
import type { RoomHub } from './room-hub';

export const FanoutMode = {
  CHANGE_STREAMS: 'change-streams',
  POLL: 'poll',
} as const satisfies Record<string, RoomFanout>;
export type FanoutMode = RoomFanout;

/** Pause between two reads of the rooms' new messages in poll mode. */
export const POLL_INTERVAL_MS = 100;
/** Most messages one poll reads per room. */
const POLL_PAGE = 200;
/**
 * How long the poll waits for a missing seq below newer ones: another process may have reserved it
 * and not stored it yet. A seq whose store failed stays missing; the poll then moves on.
 */
export const GAP_WAIT_MS = 2_000;

export interface MessageFanout {
  mode: FanoutMode;
  stop(): Promise<void>;
}

/**
 * Brings messages stored by other API processes to this process's sockets, through MongoDB itself:
 * by default a short poll of the rooms this process has sockets for, by (roomId, seq), on any server;
 * with ROOM_FANOUT=change-streams one change stream on inserted messages, which needs a replica set
 * and has never run in this project's tests. RoomHub.publishStored drops what was already published.
 */
export async function startMessageFanout(
  store: Store,
  messages: MessageStore,
  hub: RoomHub,
  logger: Logger,
  mode: FanoutMode,
): Promise<MessageFanout> {
  if (mode === FanoutMode.CHANGE_STREAMS) {
    // Refused rather than polled instead: the operator chose change streams, and a fallback would run,
    // unseen but for one log line, the mode they did not choose, with its load (a read per room every
    // 100 ms, and page reads that may scan the collection). Failing at start shows the mismatch (often a MONGODB_URI without
    // its replica set) at once; unsetting ROOM_FANOUT is the fix when polling is what is wanted.
    if (!(await isReplicaSet(store))) {
      throw new Error(
        'ROOM_FANOUT=change-streams needs a MongoDB replica set (or sharded cluster), and this server has none (FerretDB or a standalone mongod); unset ROOM_FANOUT to poll',
      );
    }
    const close = messages.watchInserts(
      (message) => hub.publishStored(message, true),
      (error) => logger.error({ err: error }, 'message change stream failed'),
    );
    logger.info({ mode: FanoutMode.CHANGE_STREAMS }, 'message fan-out');
    return { mode: FanoutMode.CHANGE_STREAMS, stop: close };
  }
  const poll = new MessagePoll(messages, hub);
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await poll.once().catch((error: unknown) => logger.warn({ err: error }, 'message poll failed'));
      await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    }
  })();
  logger.info({ mode: FanoutMode.POLL, intervalMs: POLL_INTERVAL_MS }, 'message fan-out');
  return {
    mode: FanoutMode.POLL,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** Change streams need a replica set (or sharded cluster); a standalone server has none. */
async function isReplicaSet(store: Store): Promise<boolean> {
  const hello = await store.db.command({ hello: 1 });
  return typeof hello.setName === 'string' || hello.msg === 'isdbgrid';
}

interface Cursor {
  /** RoomHub's generation of the room the cursor was started for. */
  generation: number;
  seq: number;
  gapSince?: number;
}

/** One round reads, for each room with sockets here, the messages after the seq up to which it has read all. */
export class MessagePoll {
  /** Per room: the seq up to which every message was read, and since when a gap above it waits. */
  private readonly cursors = new Map<string, Cursor>();

  constructor(
    private readonly messages: MessageStore,
    private readonly hub: RoomHub,
  ) {}

  async once(): Promise<void> {
    const rooms = this.hub.connectedRooms();
    for (const roomId of this.cursors.keys())
      if (!rooms.some((room) => room.roomId === roomId)) this.cursors.delete(roomId);
    for (const { roomId, generation } of rooms) {
      const cursor = this.cursors.get(roomId);
      // A room newly connected here starts at the present: its history is the sockets' `since` business.
      if (cursor?.generation !== generation)
        this.cursors.set(roomId, { generation, seq: await this.messages.lastSeq(roomId) });
      else await this.read(roomId, cursor);
    }
  }

  private async read(roomId: string, cursor: Cursor): Promise<void> {
    // Paging the messages may scan the collection (src/store/mongo.ts); the counter says whether there is anything to page.
    const reserved = await this.messages.reservedSeq(roomId);
    if (this.hub.accountsFor(roomId, cursor.seq, reserved)) {
      cursor.seq = Math.max(cursor.seq, reserved);
      cursor.gapSince = undefined;
      return;
    }
    const page = await this.messages.page(roomId, { kind: 'after', seq: cursor.seq }, POLL_PAGE);
    let contiguous = cursor.seq;
    for (const message of page) {
      this.hub.publishStored(message, true);
      if (message.seq === contiguous + 1) contiguous = message.seq;
    }
    const newest = page.at(-1)?.seq ?? cursor.seq;
    if (contiguous === newest) {
      cursor.seq = newest;
      cursor.gapSince = undefined;
      return;
    }
    cursor.gapSince ??= Date.now();
    if (Date.now() - cursor.gapSince < GAP_WAIT_MS) {
      cursor.seq = contiguous;
    } else {
      cursor.seq = newest;
      cursor.gapSince = undefined;
    }
  }
}
