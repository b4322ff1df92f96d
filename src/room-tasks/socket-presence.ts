import type { IndexDescription } from 'mongodb';
import type { ParticipantRef, ParticipantType } from '../auth/participant';
import type { Store } from '../store/mongo';

export const SOCKET_PRESENCE_COLLECTION = 'socket_presence';
/** One heartbeat document per API process: `{_id: queue, seenAt}`. */
export const PRESENCE_PROCESSES_COLLECTION = 'socket_presence_processes';

/**
 * Which API process holds a participant's socket to a room, named by the Temporal task queue that
 * process's delivery worker polls. Records are removed on leave; a process's heartbeat vouches for
 * all of them at once, and the records of a process silent for STALE_AFTER_MS (it died) are ignored.
 */
interface PresenceDocument {
  _id: string;
  roomId: string;
  participantType: string;
  participantId: string;
  queue: string;
}

interface ProcessDocument {
  _id: string;
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

  private get processes() {
    return this.store.collection<ProcessDocument>(PRESENCE_PROCESSES_COLLECTION);
  }

  private idOf(roomId: string, participant: ParticipantRef): string {
    return `${this.queue}|${roomId}|${participant.type}:${participant.id}`;
  }

  async arrived(roomId: string, participant: ParticipantRef): Promise<void> {
    const document = { roomId, participantType: participant.type, participantId: participant.id, queue: this.queue };
    await this.presence.replaceOne({ _id: this.idOf(roomId, participant) }, document, { upsert: true });
  }

  async departed(roomId: string, participant: ParticipantRef): Promise<void> {
    await this.presence.deleteOne({ _id: this.idOf(roomId, participant) });
  }

  /**
   * Keeps this process's records fresh: one small write by _id, whatever the number of sockets, since
   * the store may serve writes one at a time and chat messages wait behind them (src/store/mongo.ts).
   */
  async refresh(): Promise<void> {
    await this.processes.updateOne({ _id: this.queue }, { $set: { seenAt: new Date() } }, { upsert: true });
  }

  /** Removes this process's records at shutdown. */
  async clear(): Promise<void> {
    await this.presence.deleteMany({ queue: this.queue });
    await this.processes.deleteOne({ _id: this.queue });
  }
}

/** Reads presence for the workflow's activities, from any process. */
export class PresenceLookup {
  constructor(private readonly store: Store) {}

  /** The queues of the records matching `filter` whose process is alive, most recently seen first. */
  private async liveQueues(filter: Record<string, unknown>): Promise<string[]> {
    const records = await this.store.collection<PresenceDocument>(SOCKET_PRESENCE_COLLECTION).find(filter).toArray();
    const queues = [...new Set(records.map((record) => record.queue))];
    const since = Date.now() - STALE_AFTER_MS;
    const processes = this.store.collection<ProcessDocument>(PRESENCE_PROCESSES_COLLECTION);
    // By _id, one at a time: the one lookup every store serves from an index (src/store/mongo.ts).
    const seen = await Promise.all(
      queues.map(async (queue) => ({
        queue,
        seenAt: (await processes.findOne({ _id: queue }))?.seenAt.getTime() ?? 0,
      })),
    );
    return seen
      .filter((holder) => holder.seenAt >= since)
      .sort((a, b) => b.seenAt - a.seenAt)
      .map((holder) => holder.queue);
  }

  /** The queue of a process holding the participant's socket to the room, the most recently alive one. */
  async queueOf(roomId: string, participant: ParticipantRef): Promise<string | null> {
    const [queue] = await this.liveQueues({ roomId, participantType: participant.type, participantId: participant.id });
    return queue ?? null;
  }

  /** The queues of every process with a socket to the room. */
  async queuesOf(roomId: string): Promise<string[]> {
    return this.liveQueues({ roomId });
  }

  /** Who is connected to the room through a live process, each once, in the order first recorded. */
  async participantsOf(roomId: string): Promise<ParticipantRef[]> {
    const filter = { roomId };
    const [records, live] = await Promise.all([
      this.store.collection<PresenceDocument>(SOCKET_PRESENCE_COLLECTION).find(filter).toArray(),
      this.liveQueues(filter),
    ]);
    const alive = new Set(live);
    const present = new Map<string, ParticipantRef>();
    for (const record of records.filter((record) => alive.has(record.queue)))
      present.set(`${record.participantType}:${record.participantId}`, {
        type: record.participantType as ParticipantType,
        id: record.participantId,
      });
    return [...present.values()];
  }
}
