import type { Logger } from '../ops/logger';
import { isDuplicateKey } from '../store/mongo';
import { messageFrame, participantEventFrame, SystemEvent, type Frame } from './frames';
import type { Message, MessageStore } from './message-store';
import { participantKey, type ParticipantRef } from './room';

/** One live connection to a room, whatever carries it. */
export interface RoomConnection {
  readonly roomId: string;
  readonly participant: ParticipantRef;
  /** Takes a serialized frame; `seq` is set for stored messages, so a resuming connection can drop duplicates. */
  deliver(text: string, seq?: number): void;
  close(code: number, reason: string): void;
}

export interface OutgoingMessage {
  roomId: string;
  sender: ParticipantRef;
  content: string;
  metadata?: Record<string, unknown>;
}

/** Seq allocation retries when another process took the seq first (its insert hit the unique index). */
const MAX_STORE_ATTEMPTS = 3;

/** What this process knows of one room: who is connected, and the queue its messages are stored through. */
class LiveRoom {
  readonly connections = new Set<RoomConnection>();
  /** Connections per participant key: a participant joins with its first connection and leaves with its last. */
  readonly members = new Map<string, number>();
  /** The last seq stored from here; unknown until the first message, and after a failure. */
  lastSeq?: number;
  /** Settles once every message submitted so far is stored and published, or failed. */
  queue: Promise<unknown> = Promise.resolve();
  inFlight = 0;

  get idle(): boolean {
    return this.connections.size === 0 && this.inFlight === 0;
  }
}

/**
 * The rooms' live state in this process and the one way a message enters a room: stored first,
 * then published, so no one receives a message that the history lacks. `publish` is the single
 * fan-out point, where a multi-process deployment hooks in.
 */
export class RoomHub {
  private readonly rooms = new Map<string, LiveRoom>();

  constructor(
    private readonly messages: MessageStore,
    private readonly logger: Logger,
  ) {}

  /** Distinct participants connected to the room in this process. */
  connectedParticipants(roomId: string): number {
    return this.rooms.get(roomId)?.members.size ?? 0;
  }

  isConnected(roomId: string, participant: ParticipantRef): boolean {
    return this.rooms.get(roomId)?.members.has(participantKey(participant)) ?? false;
  }

  join(connection: RoomConnection): void {
    const room = this.room(connection.roomId);
    room.connections.add(connection);
    const key = participantKey(connection.participant);
    const count = room.members.get(key) ?? 0;
    room.members.set(key, count + 1);
    if (count === 0) this.publish(connection.roomId, participantEventFrame(connection.roomId, SystemEvent.PARTICIPANT_JOINED, connection.participant));
  }

  leave(connection: RoomConnection): void {
    const room = this.rooms.get(connection.roomId);
    if (!room?.connections.delete(connection)) return;
    const key = participantKey(connection.participant);
    const count = room.members.get(key) ?? 1;
    if (count > 1) {
      room.members.set(key, count - 1);
    } else {
      room.members.delete(key);
      this.publish(connection.roomId, participantEventFrame(connection.roomId, SystemEvent.PARTICIPANT_LEFT, connection.participant));
    }
    this.forgetIfIdle(connection.roomId, room);
  }

  /** Closes every connection of `participant` to the room, for instance once it lost access to a private room. */
  disconnect(roomId: string, participant: ParticipantRef, code: number, reason: string): void {
    const key = participantKey(participant);
    for (const connection of this.rooms.get(roomId)?.connections ?? []) {
      if (participantKey(connection.participant) === key) connection.close(code, reason);
    }
  }

  /**
   * Stores the message, then publishes it to the room. Resolves with the stored message; rejects,
   * without publishing anything, when it could not be stored.
   *
   * A room's messages are stored one after the other in this process, so the store always holds
   * every seq up to the newest but one in flight: a resuming connection that reads the history
   * and then takes live messages above the last seq it read misses none. (FerretDB gains nothing
   * from concurrent inserts anyway: SQLite has one writer.)
   */
  sendMessage(message: OutgoingMessage): Promise<Message> {
    const room = this.room(message.roomId);
    room.inFlight += 1;
    const stored = room.queue.then(() => this.store(room, message));
    room.queue = stored
      .then((stored) => this.publish(message.roomId, messageFrame(stored), stored.seq), () => undefined)
      .finally(() => {
        room.inFlight -= 1;
        this.forgetIfIdle(message.roomId, room);
      });
    return stored;
  }

  /** Sends a frame to every connection of the room in this process. */
  publish(roomId: string, frame: Frame, seq?: number): void {
    const room = this.rooms.get(roomId);
    if (!room) return;
    const text = JSON.stringify(frame);
    for (const connection of room.connections) connection.deliver(text, seq);
  }

  private async store(room: LiveRoom, message: OutgoingMessage): Promise<Message> {
    for (let attempt = 1; ; attempt++) {
      try {
        room.lastSeq ??= await this.messages.lastSeq(message.roomId);
        const stored = await this.messages.insert({ ...message, seq: room.lastSeq + 1 });
        room.lastSeq = stored.seq;
        return stored;
      } catch (error) {
        // Whatever happened, the next attempt asks the store where the room stands.
        room.lastSeq = undefined;
        if (!isDuplicateKey(error) || attempt >= MAX_STORE_ATTEMPTS) throw error;
        this.logger.warn({ roomId: message.roomId }, 'seq taken by another process; catching up');
      }
    }
  }

  private room(roomId: string): LiveRoom {
    let room = this.rooms.get(roomId);
    if (!room) {
      room = new LiveRoom();
      this.rooms.set(roomId, room);
    }
    return room;
  }

  private forgetIfIdle(roomId: string, room: LiveRoom): void {
    if (room.idle && this.rooms.get(roomId) === room) this.rooms.delete(roomId);
  }
}
