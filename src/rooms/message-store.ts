import { randomUUID } from 'node:crypto';
import { MongoBulkWriteError, type ChangeStreamInsertDocument, type IndexDescription } from 'mongodb';
import type { Store } from '../store/mongo';
import type { ParticipantRef } from '../auth/participant';

export const MESSAGES_COLLECTION = 'messages';
/** One counter per room: `{_id: roomId, seq}` holds the last seq handed out. */
export const SEQUENCES_COLLECTION = 'room_sequences';

export interface Message {
  id: string;
  roomId: string;
  /** Strictly increasing within a room; the unique index {roomId, seq} guarantees no two messages share one. */
  seq: number;
  content: string;
  sender: ParticipantRef;
  timestamp: Date;
  metadata?: Record<string, unknown>;
}

/** `metadata` is free JSON, kept as text because FerretDB refuses keys with `.` or a leading `$`. */
interface MessageDocument extends Omit<Message, 'id' | 'metadata'> {
  _id: string;
  metadata?: string;
}

export type NewMessage = Omit<Message, 'id' | 'timestamp'>;

/** Where a history page starts: the newest messages, those before a seq, or those after one. */
export type PageCursor = { kind: 'latest' } | { kind: 'before'; seq: number } | { kind: 'after'; seq: number };

function fromDocument(document: MessageDocument): Message {
  const { _id, metadata, ...rest } = document;
  return { id: _id, ...rest, ...(metadata === undefined ? {} : { metadata: JSON.parse(metadata) }) };
}

export class MessageStore {
  constructor(private readonly store: Store) {}

  static indexes(): IndexDescription[] {
    // Serves history pages in both directions and refuses a second message with the same seq.
    return [{ key: { roomId: 1, seq: 1 }, name: 'room_seq', unique: true }];
  }

  private get messages() {
    return this.store.collection<MessageDocument>(MESSAGES_COLLECTION);
  }

  private get sequences() {
    return this.store.collection<{ _id: string; seq: number }>(SEQUENCES_COLLECTION);
  }

  /**
   * Stores messages, in order, under the seqs the caller allocated, in one round trip. Stops at the
   * first failure (a duplicate seq gives the driver's duplicate-key error): `stored` is what was
   * written before it. After a failure without a write result (the network) nothing counts as stored.
   */
  async insertMany(messages: NewMessage[]): Promise<{ stored: Message[]; error?: unknown }> {
    const timestamp = new Date();
    const documents: MessageDocument[] = messages.map((message) => ({
      _id: randomUUID(),
      roomId: message.roomId,
      seq: message.seq,
      content: message.content,
      sender: message.sender,
      timestamp,
      ...(message.metadata === undefined ? {} : { metadata: JSON.stringify(message.metadata) }),
    }));
    try {
      await this.messages.insertMany(documents, { ordered: true });
      return { stored: documents.map(fromDocument) };
    } catch (error) {
      const written = error instanceof MongoBulkWriteError ? error.insertedCount : 0;
      return { stored: documents.slice(0, written).map(fromDocument), error };
    }
  }

  /**
   * Reserves `count` consecutive seqs of the room and returns the first. On MongoDB the increment is
   * atomic; FerretDB may hand the same seqs to two concurrent callers, and the unique index
   * {roomId, seq} then refuses the second insert, whose caller catches up and reserves again.
   */
  async reserveSeqs(roomId: string, count: number): Promise<number> {
    const counter = await this.sequences.findOneAndUpdate({ _id: roomId }, { $inc: { seq: count } }, { upsert: true, returnDocument: 'after' });
    return counter!.seq - count + 1;
  }

  /**
   * Moves the room's counter past the highest stored seq. On FerretDB two concurrent reservations
   * can lose an increment and leave the counter behind seqs already stored; every reservation would
   * then collide until it caught up.
   */
  async catchUpSeqs(roomId: string): Promise<void> {
    const last = await this.lastSeq(roomId);
    if (last === 0) return;
    await this.sequences.updateOne({ _id: roomId }, { $max: { seq: last } }, { upsert: true });
  }

  /** The highest seq reserved in the room, stored or not yet: one read by _id, cheap on FerretDB too. */
  async reservedSeq(roomId: string): Promise<number> {
    return (await this.sequences.findOne({ _id: roomId }))?.seq ?? 0;
  }

  /** The highest stored seq of the room; 0 without messages. */
  async lastSeq(roomId: string): Promise<number> {
    const [last] = await this.messages.find({ roomId }, { projection: { seq: 1 } }).sort({ seq: -1 }).limit(1).toArray();
    return last?.seq ?? 0;
  }

  /** Every message stored from now on, by any process, through a change stream (replica sets only). */
  watchInserts(listener: (message: Message) => void, onError: (error: unknown) => void): () => Promise<void> {
    const stream = this.messages.watch<MessageDocument, ChangeStreamInsertDocument<MessageDocument>>([{ $match: { operationType: 'insert' } }]);
    stream.on('change', (change) => listener(fromDocument(change.fullDocument)));
    stream.on('error', onError);
    return () => stream.close();
  }

  async findSeq(roomId: string, messageId: string): Promise<number | undefined> {
    const document = await this.messages.findOne({ _id: messageId, roomId }, { projection: { seq: 1 } });
    return document?.seq;
  }

  /** Up to `limit` messages in chronological (seq) order. */
  async page(roomId: string, cursor: PageCursor, limit: number): Promise<Message[]> {
    if (cursor.kind === 'after') {
      const documents = await this.messages.find({ roomId, seq: { $gt: cursor.seq } }).sort({ seq: 1 }).limit(limit).toArray();
      return documents.map(fromDocument);
    }
    const filter = cursor.kind === 'before' ? { roomId, seq: { $lt: cursor.seq } } : { roomId };
    const newestFirst = await this.messages.find(filter).sort({ seq: -1 }).limit(limit).toArray();
    return newestFirst.reverse().map(fromDocument);
  }
}
