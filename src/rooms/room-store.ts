import { randomUUID } from 'node:crypto';
import type { IndexDescription } from 'mongodb';
import type { Principal } from '../auth/principal';
import type { Store } from '../store/mongo';
import { ApiError, ErrorCode } from '../http/errors';
import { participantKey } from '../auth/participant';
import { isParticipant, type NewRoom, type Participant, type Room } from './room';

export const ROOMS_COLLECTION = 'rooms';

/**
 * A room as MongoDB stores it. `metadata` is free JSON, kept as text because FerretDB refuses keys
 * with `.` or a leading `$`. `memberKeys` ("HUMAN:id", "AGENT:id") serve "rooms of this participant"
 * through a multikey index; `revision` makes participant changes compare-and-set.
 */
interface RoomDocument extends Omit<Room, 'id' | 'metadata'> {
  _id: string;
  metadata: string;
  memberKeys: string[];
  revision: number;
}

export const ParticipantChange = {
  DONE: 'done',
  UNCHANGED: 'unchanged',
  ROOM_FULL: 'room_full',
  NOT_A_PARTICIPANT: 'not_a_participant',
  NO_ROOM: 'no_room',
} as const;
export type ParticipantChange = (typeof ParticipantChange)[keyof typeof ParticipantChange];

const MAX_CHANGE_ATTEMPTS = 5;

function fromDocument(document: RoomDocument): Room {
  const { _id, metadata, memberKeys: _memberKeys, revision: _revision, ...rest } = document;
  return { id: _id, metadata: JSON.parse(metadata), ...rest };
}

function toDocumentFields(participants: Participant[]) {
  return { participants, memberKeys: participants.map((member) => participantKey({ type: member.type, id: member.participantId })) };
}

export class RoomStore {
  constructor(private readonly store: Store) {}

  static indexes(): IndexDescription[] {
    return [
      { key: { memberKeys: 1 }, name: 'by_member' },
      { key: { private: 1, _id: 1 }, name: 'public_by_id' },
    ];
  }

  private get rooms() {
    return this.store.collection<RoomDocument>(ROOMS_COLLECTION);
  }

  async create(room: NewRoom, createdBy: Principal): Promise<Room> {
    const now = new Date();
    const document: RoomDocument = {
      _id: randomUUID(),
      name: room.name,
      type: room.type,
      description: room.description,
      maxParticipants: room.maxParticipants,
      private: room.private,
      metadata: JSON.stringify(room.metadata),
      ...toDocumentFields(room.participants),
      createdBy: { kind: createdBy.kind, id: createdBy.id },
      createdAt: now,
      updatedAt: now,
      revision: 0,
    };
    await this.rooms.insertOne(document);
    return fromDocument(document);
  }

  async findById(roomId: string): Promise<Room | null> {
    const document = await this.rooms.findOne({ _id: roomId });
    return document ? fromDocument(document) : null;
  }

  /** Public rooms in id order, `limit` of them after the room `after`. */
  async listPublic(limit: number, after?: string): Promise<Room[]> {
    const filter = after === undefined ? { private: false } : { private: false, _id: { $gt: after } };
    const documents = await this.rooms.find(filter).sort({ _id: 1 }).limit(limit).toArray();
    return documents.map(fromDocument);
  }

  async listForParticipant(key: string, limit: number, after?: string): Promise<Room[]> {
    const filter = after === undefined ? { memberKeys: key } : { memberKeys: key, _id: { $gt: after } };
    const documents = await this.rooms.find(filter).sort({ _id: 1 }).limit(limit).toArray();
    return documents.map(fromDocument);
  }

  async addParticipant(roomId: string, participant: Participant): Promise<{ change: ParticipantChange; room?: Room }> {
    return this.changeParticipants(roomId, (room) => {
      if (isParticipant(room, { type: participant.type, id: participant.participantId })) return ParticipantChange.UNCHANGED;
      if (room.participants.length >= room.maxParticipants) return ParticipantChange.ROOM_FULL;
      return [...room.participants, participant];
    });
  }

  async removeParticipant(roomId: string, participant: Participant): Promise<{ change: ParticipantChange; room?: Room }> {
    return this.changeParticipants(roomId, (room) => {
      const remaining = room.participants.filter((member) => member.type !== participant.type || member.participantId !== participant.participantId);
      return remaining.length === room.participants.length ? ParticipantChange.NOT_A_PARTICIPANT : remaining;
    });
  }

  /**
   * Read, change, write only if nobody changed the room meanwhile (its revision): FerretDB has no
   * transactions, and this keeps two concurrent changes from overwriting each other.
   */
  private async changeParticipants(
    roomId: string,
    change: (room: Room) => Participant[] | ParticipantChange,
  ): Promise<{ change: ParticipantChange; room?: Room }> {
    for (let attempt = 0; attempt < MAX_CHANGE_ATTEMPTS; attempt++) {
      const document = await this.rooms.findOne({ _id: roomId });
      if (!document) return { change: ParticipantChange.NO_ROOM };
      const room = fromDocument(document);
      const outcome = change(room);
      if (!Array.isArray(outcome)) return { change: outcome, room };
      const updatedAt = new Date();
      const result = await this.rooms.updateOne(
        { _id: roomId, revision: document.revision },
        { $set: { ...toDocumentFields(outcome), updatedAt }, $inc: { revision: 1 } },
      );
      if (result.matchedCount === 1) return { change: ParticipantChange.DONE, room: { ...room, participants: outcome, updatedAt } };
    }
    throw new ApiError(ErrorCode.CONFLICT, 'The room\'s participants are changing concurrently; try again');
  }
}
