import { ApiError, ErrorCode } from '../http/errors';
import type { Logger } from '../ops/logger';
import type { RoomMetrics } from '../ops/metrics';
import { isDuplicateKey, isStoreBusy } from '../store/mongo';
import { messageFrame, participantEventFrame, SystemEvent, type Frame } from './frames';
import type { Message, MessageStore } from './message-store';
import { remember } from './remember';
import { participantKey, type ParticipantRef } from '../auth/participant';

/** One live connection to a room, whatever carries it. */
export interface RoomConnection {
  readonly roomId: string;
  readonly participant: ParticipantRef;
  /** Takes an encoded frame (UTF-8 JSON); `seq` is set for stored messages, so a resuming connection can drop duplicates. */
  deliver(data: Buffer, seq?: number): void;
  close(code: number, reason: string): void;
}

export interface OutgoingMessage {
  roomId: string;
  sender: ParticipantRef;
  content: string;
  metadata?: Record<string, unknown>;
}

/** Told when a participant's first connection to a room opens and its last one closes, in that order. */
export interface PresenceListener {
  /** Settles once the record is written (or its write failed and was logged). */
  arrived(roomId: string, participant: ParticipantRef): Promise<void>;
  departed(roomId: string, participant: ParticipantRef): Promise<void>;
}

/** Attempts at storing a batch whose seqs another process also got (the seq counter's `$inc` is not atomic on every store). */
const MAX_STORE_ATTEMPTS = 10;
/** Upper bound of the random pause before another attempt, times the attempt number. */
const RETRY_JITTER_MS = 5;
/** How many published seqs a room remembers; the tail never looks back further than its page. */
const REMEMBERED_SEQS = 1_000;
/** Most messages stored in one round trip. */
const MAX_BATCH = 100;

const noop = () => undefined;

interface PendingMessage {
  message: OutgoingMessage;
  resolve(stored: Message): void;
  reject(error: unknown): void;
}

/** What this process knows of one room: who is connected, and the messages waiting to be stored. */
class LiveRoom {
  private static created = 0;
  /** Tells this life of the room from an earlier one in the same process (message-fanout.ts). */
  readonly generation = ++LiveRoom.created;
  readonly connections = new Set<RoomConnection>();
  /** Connections per participant key: a participant joins with its first connection and leaves with its last. */
  readonly members = new Map<string, number>();
  readonly waiting: PendingMessage[] = [];
  storing = false;
  /** The latest seqs published here: a message stored by this process and also found by the tail goes out once. */
  readonly publishedSeqs = new Set<number>();
  /** The latest seqs this process reserved for its own messages: it publishes them itself, so the tail need not look for them. */
  readonly reservedSeqs = new Set<number>();
  /** The seqs this process is inserting now, and when that insert settles. */
  writing?: { first: number; last: number; settled: Promise<void> };

  get idle(): boolean {
    return this.connections.size === 0 && this.waiting.length === 0 && !this.storing;
  }
}

/**
 * The rooms' live state in this process and the one way a message enters a room: stored first,
 * then published, so no one receives a message that the history lacks. `publish` is the single
 * fan-out point, where a multi-process deployment hooks in.
 */
export class RoomHub {
  private readonly rooms = new Map<string, LiveRoom>();
  /** Where presence goes beyond this process (room tasks); unset, rooms work on their own. */
  presence?: PresenceListener;

  constructor(
    private readonly messages: MessageStore,
    private readonly logger: Logger,
    private readonly metrics: RoomMetrics,
  ) {}

  /**
   * Tells the room a participant joined or left once its presence record is `written`, or at once
   * when presence stays in this process: the frames then follow the writes' order.
   */
  private announce(connection: RoomConnection, event: SystemEvent, written: Promise<void> | undefined): void {
    const publish = () =>
      this.publish(connection.roomId, participantEventFrame(connection.roomId, event, connection.participant));
    if (written === undefined) publish();
    else void written.then(publish);
  }

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
    if (count === 0) {
      this.metrics.joins.inc();
      // Announced once recorded: a participant_joined tells the room, and the participant, that room
      // tasks and task updates reach this socket from now on.
      this.announce(
        connection,
        SystemEvent.PARTICIPANT_JOINED,
        this.presence?.arrived(connection.roomId, connection.participant),
      );
    }
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
      this.metrics.leaves.inc();
      // After the record, as the join, so a quick leave never overtakes its join.
      this.announce(
        connection,
        SystemEvent.PARTICIPANT_LEFT,
        this.presence?.departed(connection.roomId, connection.participant),
      );
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
   * A room's messages are stored by one loop per process, in batches (one seq reservation and one
   * insert for all the messages that arrived meanwhile), each batch after the previous one. So the
   * store holds every message this process published, its seqs increase in publication order, and a
   * resuming connection that reads the history, then takes live messages above the last seq it read,
   * misses none.
   */
  sendMessage(message: OutgoingMessage): Promise<Message> {
    const room = this.room(message.roomId);
    const stored = new Promise<Message>((resolve, reject) => room.waiting.push({ message, resolve, reject }));
    if (!room.storing) {
      this.storeWaiting(message.roomId, room).catch((error: unknown) =>
        this.logger.error({ err: error, roomId: message.roomId }, 'message store loop failed'),
      );
    }
    return stored;
  }

  /** Sends a frame to every connection of the room in this process. */
  publish(roomId: string, frame: Frame, seq?: number): void {
    const room = this.rooms.get(roomId);
    if (!room) return;
    // Encoded once for every connection.
    const data = Buffer.from(JSON.stringify(frame));
    for (const connection of room.connections) connection.deliver(data, seq);
  }

  /**
   * Rooms with connections in this process: those whose messages from other processes matter here.
   * A room left by all and joined again has a new generation: what was stored meanwhile is history.
   */
  connectedRooms(): Array<{ roomId: string; generation: number }> {
    return [...this.rooms]
      .filter(([, room]) => room.connections.size > 0)
      .map(([roomId, room]) => ({ roomId, generation: room.generation }));
  }

  /**
   * Publishes a stored message, from this process or another (message-fanout.ts, which says
   * `fannedOut`: its delay since the message was stored is the fan-out's lag), once.
   */
  publishStored(message: Message, fannedOut = false): void {
    const room = this.rooms.get(message.roomId);
    if (!room || room.publishedSeqs.has(message.seq)) return;
    remember(room.publishedSeqs, message.seq, REMEMBERED_SEQS);
    if (fannedOut) this.metrics.fanoutLag.observe(Math.max(0, Date.now() - message.timestamp.getTime()) / 1000);
    this.metrics.deliveries.inc(room.connections.size);
    this.publish(message.roomId, messageFrame(message), message.seq);
  }

  /**
   * Whether every seq in (after, through] was published here or reserved by this process, which
   * publishes its own messages: then the tail has nothing to read (and a lone process never reads).
   */
  accountsFor(roomId: string, after: number, through: number): boolean {
    const room = this.rooms.get(roomId);
    if (!room || through - after > REMEMBERED_SEQS) return false;
    for (let seq = after + 1; seq <= through; seq += 1) {
      if (!room.publishedSeqs.has(seq) && !room.reservedSeqs.has(seq)) return false;
    }
    return true;
  }

  /**
   * Settles once this process's insert of any of `seqs` ends (stored or failed), at once when one of
   * them is stored already (published here); undefined when none of them is being inserted or was
   * published here. A history read looks its seqs up one by one, in parallel: it may find a later
   * message and miss an earlier one whose insert was under way, or ended while the read ran.
   */
  insertOf(roomId: string, seqs: number[]): Promise<void> | undefined {
    const room = this.rooms.get(roomId);
    if (!room) return undefined;
    if (seqs.some((seq) => room.publishedSeqs.has(seq))) return Promise.resolve();
    const { writing } = room;
    return writing && seqs.some((seq) => seq >= writing.first && seq <= writing.last) ? writing.settled : undefined;
  }

  /** Sends a frame to the participant's connections to the room in this process; false when it has none. */
  sendTo(roomId: string, participant: ParticipantRef, frame: Frame): boolean {
    const key = participantKey(participant);
    const connections = [...(this.rooms.get(roomId)?.connections ?? [])].filter(
      (connection) => participantKey(connection.participant) === key,
    );
    const data = Buffer.from(JSON.stringify(frame));
    for (const connection of connections) connection.deliver(data);
    return connections.length > 0;
  }

  private async storeWaiting(roomId: string, room: LiveRoom): Promise<void> {
    room.storing = true;
    try {
      while (room.waiting.length > 0) await this.storeBatch(roomId, room, room.waiting.splice(0, MAX_BATCH));
    } finally {
      room.storing = false;
      this.forgetIfIdle(roomId, room);
    }
  }

  private async storeBatch(roomId: string, room: LiveRoom, batch: PendingMessage[]): Promise<void> {
    let remaining = batch;
    for (let attempt = 1; remaining.length > 0; attempt++) {
      let outcome: { stored: Message[]; error?: unknown };
      try {
        const first = await this.messages.reserveSeqs(roomId, remaining.length);
        for (let seq = first; seq < first + remaining.length; seq += 1)
          remember(room.reservedSeqs, seq, REMEMBERED_SEQS);
        const insert = this.messages.insertMany(
          remaining.map((pending, index) => ({ ...pending.message, seq: first + index })),
        );
        room.writing = { first, last: first + remaining.length - 1, settled: insert.then(noop, noop) };
        outcome = await insert.finally(() => (room.writing = undefined));
      } catch (error) {
        outcome = { stored: [], error };
      }
      this.metrics.messagesStored.inc(outcome.stored.length);
      outcome.stored.forEach((message, index) => {
        this.publishStored(message);
        remaining[index].resolve(message);
      });
      remaining = remaining.slice(outcome.stored.length);
      if (outcome.error === undefined) return;
      if (!isDuplicateKey(outcome.error) && !isStoreBusy(outcome.error)) {
        for (const pending of remaining) pending.reject(outcome.error);
        return;
      }
      if (attempt >= MAX_STORE_ATTEMPTS) {
        for (const pending of remaining)
          pending.reject(
            new ApiError(ErrorCode.CONFLICT, "The room's next seq was taken repeatedly; send the message again"),
          );
        return;
      }
      this.logger.warn(
        { roomId, attempt, reason: isStoreBusy(outcome.error) ? 'store busy' : 'seq taken by another process' },
        'storing messages again',
      );
      // Two processes retrying in step would collide again: a random pause breaks the rhythm.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * RETRY_JITTER_MS * attempt));
      await this.messages
        .catchUpSeqs(roomId)
        .catch((error: unknown) => this.logger.warn({ err: error, roomId }, 'could not catch up the seq counter'));
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
