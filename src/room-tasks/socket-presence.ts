import type { IndexDescription } from 'mongodb';
import type { ParticipantRef } from '../rooms/room';
import type { Store } from '../store/mongo';

export const SOCKET_PRESENCE_COLLECTION = 'socket_presence';

/**
 * Which API process holds a participant's socket to a room, named by the Temporal task queue that
 * process's delivery worker polls. Records are refreshed by a heartbeat and removed on leave; a
 * record not refreshed for STALE_AFTER_MS belongs to a process that died and is ignored.
 */
interface PresenceDocument {
  _id: string;
  roomId: string;
  participantType: string;
  participantId: string;
  queue: string;
  seenAt: Date;
}

export const PRESENCE_HEARTBEAT_MS = 10_000;
const STALE_AFTER_MS = 3 * PRESENCE_HEARTBEAT_MS;

export class SocketPresence {
  constructor(
    private readonly store: Store,
    /** The delivery task queue of this process. */
    readonly queue: string,
  ) {}

  static indexes(): IndexDescription[] {
    return [
      { key: { roomId: 1 }, name: 'by_room' },
      { key: { queue: 1 }, name: 'by_queue' },
    ];
  }

  private get presence() {
    return this.store.collection<PresenceDocument>(SOCKET_PRESENCE_COLLECTION);
  }

  private idOf(roomId: string, participant: ParticipantRef): string {
    return `${this.queue}|${roomId}|${participant.type}:${participant.id}`;
  }

  async arrived(roomId: string, participant: ParticipantRef): Promise<void> {
    const document = { roomId, participantType: participant.type, participantId: participant.id, queue: this.queue, seenAt: new Date() };
    await this.presence.replaceOne({ _id: this.idOf(roomId, participant) }, document, { upsert: true });
  }

  async departed(roomId: string, participant: ParticipantRef): Promise<void> {
    await this.presence.deleteOne({ _id: this.idOf(roomId, participant) });
  }

  /** Keeps this process's records fresh. */
  async refresh(): Promise<void> {
    await this.presence.updateMany({ queue: this.queue }, { $set: { seenAt: new Date() } });
  }

  /** Removes this process's records at shutdown. */
  async clear(): Promise<void> {
    await this.presence.deleteMany({ queue: this.queue });
  }
}

/** Reads presence for the workflow's activities, from any process. */
export class PresenceLookup {
  constructor(private readonly store: Store) {}

  private fresh(filter: Record<string, unknown>): Promise<PresenceDocument[]> {
    const since = new Date(Date.now() - STALE_AFTER_MS);
    return this.store
      .collection<PresenceDocument>(SOCKET_PRESENCE_COLLECTION)
      .find(filter)
      .toArray()
      .then((records) => records.filter((record) => record.seenAt >= since));
  }

  /** The queue of a process holding the participant's socket to the room, most recently seen first. */
  async queueOf(roomId: string, participant: ParticipantRef): Promise<string | null> {
    const records = await this.fresh({ roomId, participantType: participant.type, participantId: participant.id });
    records.sort((a, b) => b.seenAt.getTime() - a.seenAt.getTime());
    return records[0]?.queue ?? null;
  }

  /** The queues of every process with a socket to the room. */
  async queuesOf(roomId: string): Promise<string[]> {
    return [...new Set((await this.fresh({ roomId })).map((record) => record.queue))];
  }
}
