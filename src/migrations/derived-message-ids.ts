import { MongoServerError } from 'mongodb';
import { messageId, seqOf } from '../rooms/message-ids';
import {
  MESSAGE_ALIASES_COLLECTION,
  MESSAGES_COLLECTION,
  type MessageAliasDocument,
  type MessageDocument,
} from '../rooms/message-store';
import { isDuplicateKey, type Store } from '../store/mongo';
import type { Migration } from './migration';

/** The index that kept seqs unique before the `_id` did; it would refuse a message's copy beside its original. */
const OLD_SEQ_INDEX = 'room_seq';
const INDEX_NOT_FOUND = 27;
const NAMESPACE_NOT_FOUND = 26;

/**
 * Gives the messages stored with a random `_id` the `_id` derived from their room and seq, once,
 * before the service serves: history pages read only derived ids, so they never scan. A fallback
 * that read the old messages on demand could not tell a hole from an old message without a query
 * on (roomId, seq), which may read the whole collection (src/store/mongo.ts), the cost this layout removes.
 * Each message keeps its id on the wire (`legacyId`, and an alias by that id for `before=`).
 *
 * Every step can be repeated, so a start that dies midway is finished by the next one: the alias,
 * then the copy under the derived `_id` (a duplicate means it is there), then the original goes.
 * All API processes move to this layout together: an older process still running would store
 * messages that this one does not read.
 */
export const derivedMessageIds: Migration = {
  name: 'message ids derived from room and seq',
  doneOnceAs: 'message-ids-derived-from-room-and-seq',
  run: deriveMessageIds,
};

async function deriveMessageIds(store: Store): Promise<number> {
  const messages = store.collection<MessageDocument>(MESSAGES_COLLECTION);
  const aliases = store.collection<MessageAliasDocument>(MESSAGE_ALIASES_COLLECTION);
  await messages.dropIndex(OLD_SEQ_INDEX).catch((error: unknown) => {
    if (!(error instanceof MongoServerError && [INDEX_NOT_FOUND, NAMESPACE_NOT_FOUND].includes(error.code as number)))
      throw error;
  });
  const stored = await messages.find({}, { projection: { _id: 1, roomId: 1 } }).toArray();
  const old = stored.filter((message) => seqOf(message.roomId, message._id) === undefined);
  for (const { _id } of old) {
    const original = await messages.findOne({ _id });
    if (!original) continue;
    await ignoreDuplicate(aliases.insertOne({ _id, roomId: original.roomId, seq: original.seq }));
    await ignoreDuplicate(
      messages.insertOne({ ...original, _id: messageId(original.roomId, original.seq), legacyId: _id }),
    );
    await messages.deleteOne({ _id });
  }
  return old.length;
}

async function ignoreDuplicate(write: Promise<unknown>): Promise<void> {
  await write.catch((error: unknown) => {
    if (!isDuplicateKey(error)) throw error;
  });
}
