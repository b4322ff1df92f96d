import { createHash } from 'node:crypto';

/** Hex digits of the seq at the start of a message id: 48 bits. */
const SEQ_HEX = 12;
const MAX_SEQ = 2 ** 48 - 1;

/**
 * A message's id and `_id`, derived from its room and seq: a page of history is then a set of
 * `_id` lookups, the one query every store serves without reading the whole collection
 * (src/store/mongo.ts), and no two messages of a room can share a seq. The contract makes it a UUID: an
 * RFC 9562 version 8 (custom) UUID whose first 48 bits are the seq and whose other 74 free bits
 * come from a SHA-256 of the room id, so the seq is read back from the id and the room checked.
 */
export function messageId(roomId: string, seq: number): string {
  if (!Number.isSafeInteger(seq) || seq < 1 || seq > MAX_SEQ) throw new RangeError(`No message id for seq ${seq}`);
  const room = createHash('sha256').update(roomId).digest('hex');
  const variant = ((parseInt(room[3], 16) & 0x3) | 0x8).toString(16);
  const hex = `${seq.toString(16).padStart(SEQ_HEX, '0')}8${room.slice(0, 3)}${variant}${room.slice(4, 19)}`;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The seq a message id of `roomId` names; undefined for any other id (another room's, or one stored before ids were derived). */
export function seqOf(roomId: string, id: string): number | undefined {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)) return undefined;
  const seq = parseInt(id.replace('-', '').slice(0, SEQ_HEX), 16);
  return seq >= 1 && messageId(roomId, seq) === id ? seq : undefined;
}
