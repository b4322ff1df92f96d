import { MongoBulkWriteError, type ChangeStreamInsertDocument, type IndexDescription } from 'mongodb';
import { messageId, seqOf } from './message-ids';
import type { Store } from '../store/mongo';
import type { ParticipantRef } from '../auth/participant';

export const MESSAGES_COLLECTION = 'messages';
/** One counter per room: `{_id: roomId, seq}` holds the last seq handed out. */
export const SEQUENCES_COLLECTION = 'room_sequences';

export interface Message {
  id: string;
  roomId: string;
  /** Strictly increasing within a room; the `_id` derived from it (message-ids.ts) guarantees no two messages share one. */
  seq: number;
  content: string;
  sender: ParticipantRef;
  timestamp: Date;
  metadata?: Record<string, unknown>;
}

/**
 * `metadata` is free JSON, kept as text because a store may refuse keys with `.` or a leading `$` (src/store/mongo.ts).
 * `legacyId` is the id a message stored before ids were derived keeps on the wire (src/migrations/derived-message-ids.ts).
 */
export interface MessageDocument extends Omit<Message, 'id' | 'metadata'> {
  _id: string;
  legacyId?: string;
  metadata?: string;
}

export type NewMessage = Omit<Message, 'id' | 'timestamp'>;

/** Where a history page starts: the newest messages, those before a seq, or those after one. */
export type PageCursor = { kind: 'latest' } | { kind: 'before'; seq: number } | { kind: 'after'; seq: number };

/**
 * Most seqs one page looks at beyond the messages it returns. A reserved seq has no message when its
 * insert failed (a batch of at most 100, see room-hub.ts) or is still under way; a run of holes this
 * long would take ten failed batches in a row, and a page never reads more than this past them.
 */
export const MAX_PAGE_HOLES = 1_000;
/** Fewest seqs looked up in one round while a page still misses messages. */
const MIN_LOOKUP_ROUND = 20;

export const MESSAGE_ALIASES_COLLECTION = 'message_aliases';

/** A message stored before ids were derived, found by the id it kept: `_id` is that id. */
export interface MessageAliasDocument {
  _id: string;
  roomId: string;
  seq: number;
}

function fromDocument(document: MessageDocument): Message {
  const { _id, legacyId, metadata, ...rest } = document;
  return {
    id: legacyId ?? _id,
    ...rest,
    ...(metadata === undefined ? {} : { metadata: JSON.parse(metadata) as Message['metadata'] }),
  };
}

export class MessageStore {
  constructor(private readonly store: Store) {}

  /** None: every read is by `_id` (message-ids.ts), which every store serves from its `_id` index. */
  static indexes(): IndexDescription[] {
    return [];
  }

  private get messages() {
    return this.store.collection<MessageDocument>(MESSAGES_COLLECTION);
  }

  private get sequences() {
    return this.store.collection<{ _id: string; seq: number }>(SEQUENCES_COLLECTION);
  }

  private get aliases() {
    return this.store.collection<MessageAliasDocument>(MESSAGE_ALIASES_COLLECTION);
  }

  /**
   * Stores messages, in order, under the seqs the caller allocated, in one round trip. Stops at the
   * first failure (a seq already stored gives the driver's duplicate-key error on `_id`): `stored` is
   * what was written before it. After a failure without a write result (the network) nothing counts as stored.
   */
  async insertMany(messages: NewMessage[]): Promise<{ stored: Message[]; error?: unknown }> {
    const timestamp = new Date();
    const documents: MessageDocument[] = messages.map((message) => ({
      _id: messageId(message.roomId, message.seq),
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
   * Reserves `count` consecutive seqs of the room and returns the first. An `$inc` is not atomic on
   * every store (src/store/mongo.ts): the same seqs may go to two concurrent callers, and the `_id` derived from the
   * seq then refuses the second insert, whose caller catches up and reserves again.
   */
  async reserveSeqs(roomId: string, count: number): Promise<number> {
    const counter = await this.sequences.findOneAndUpdate(
      { _id: roomId },
      { $inc: { seq: count } },
      { upsert: true, returnDocument: 'after' },
    );
    return counter!.seq - count + 1;
  }

  /**
   * Moves the room's counter past the stored seqs above it. Where `$inc` is not atomic, two concurrent reservations
   * can lose an increment and leave the counter behind seqs already stored; every reservation would
   * then collide until it caught up. Looks at most MAX_PAGE_HOLES seqs past the counter.
   */
  async catchUpSeqs(roomId: string): Promise<void> {
    let last = await this.reservedSeq(roomId);
    for (let scanned = 0; scanned < MAX_PAGE_HOLES; scanned += MIN_LOOKUP_ROUND) {
      const found = await this.readSeqs(roomId, range(last + 1, MIN_LOOKUP_ROUND, 1));
      if (found.length === 0) break;
      last = found.at(-1)!.seq;
    }
    await this.sequences.updateOne({ _id: roomId }, { $max: { seq: last } }, { upsert: true });
  }

  /** The highest seq reserved in the room, stored or not yet: one read by _id. */
  async reservedSeq(roomId: string): Promise<number> {
    return (await this.sequences.findOne({ _id: roomId }))?.seq ?? 0;
  }

  /** The highest stored seq of the room up to its counter; 0 without messages. */
  async lastSeq(roomId: string): Promise<number> {
    const [last] = await this.page(roomId, { kind: 'latest' }, 1);
    return last?.seq ?? 0;
  }

  /** Every message stored from now on, by any process, through a change stream (replica sets only). */
  watchInserts(listener: (message: Message) => void, onError: (error: unknown) => void): () => Promise<void> {
    const stream = this.messages.watch<MessageDocument, ChangeStreamInsertDocument<MessageDocument>>([
      { $match: { operationType: 'insert' } },
    ]);
    stream.on('change', (change) => listener(fromDocument(change.fullDocument)));
    stream.on('error', onError);
    return () => stream.close();
  }

  /** The seq of the room's message with the wire id `id`; undefined when the room has no such message. */
  async findSeq(roomId: string, id: string): Promise<number | undefined> {
    const seq = seqOf(roomId, id);
    if (seq !== undefined)
      return (await this.messages.findOne({ _id: id }, { projection: { _id: 1 } })) ? seq : undefined;
    const alias = await this.aliases.findOne({ _id: id });
    return alias?.roomId === roomId ? alias.seq : undefined;
  }

  /**
   * Up to `limit` messages in chronological (seq) order: by `_id` lookups of the seqs next to the
   * cursor, between 1 and the room's counter, skipping holes (seqs reserved and never stored) for at
   * most MAX_PAGE_HOLES seqs. The cost depends on `limit` and the holes, never on how many messages
   * the store holds.
   */
  async page(roomId: string, cursor: PageCursor, limit: number): Promise<Message[]> {
    const reserved = await this.reservedSeq(roomId);
    const [start, step]: [number, 1 | -1] =
      cursor.kind === 'after'
        ? [cursor.seq + 1, 1]
        : [Math.min(reserved, cursor.kind === 'before' ? cursor.seq - 1 : reserved), -1];
    const end = step === 1 ? reserved : 1;
    const found: Message[] = [];
    let next = start;
    while (
      found.length < limit &&
      (step === 1 ? next <= end : next >= end) &&
      Math.abs(next - start) < limit + MAX_PAGE_HOLES
    ) {
      const count = Math.min(Math.max(limit - found.length, MIN_LOOKUP_ROUND), Math.abs(end - next) + 1);
      found.push(...(await this.readSeqs(roomId, range(next, count, step))));
      next += count * step;
    }
    const page = found.slice(0, limit);
    return step === 1 ? page : page.reverse();
  }

  /**
   * The stored messages among `seqs`, in the order of `seqs`. One `findOne` by `_id` each, in
   * parallel: `_id` equality is served by an index everywhere, `$in` may read the whole collection (src/store/mongo.ts).
   */
  private async readSeqs(roomId: string, seqs: number[]): Promise<Message[]> {
    const documents = await Promise.all(seqs.map((seq) => this.messages.findOne({ _id: messageId(roomId, seq) })));
    return documents.flatMap((document) => (document ? [fromDocument(document)] : []));
  }
}

/** `count` seqs from `first`, one `step` apart. */
function range(first: number, count: number, step: 1 | -1): number[] {
  return Array.from({ length: count }, (_, index) => first + index * step);
}
