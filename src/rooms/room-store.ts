import { randomUUID } from 'node:crypto';
import type { IndexDescription } from 'mongodb';
import type { Principal } from '../auth/principal';
import { ChangeLog } from '../store/change-log';
import type { Store } from '../store/mongo';
import { ApiError, ErrorCode } from '../http/errors';
import { participantKey } from '../auth/participant';
import { isParticipant, type NewRoom, type Participant, type Room } from './room';

export const ROOMS_COLLECTION = 'rooms';

/**
 * A room as MongoDB stores it. `metadata` is free JSON, kept as text because a store may refuse keys
 * with `.` or a leading `$` (src/store/mongo.ts). `memberKeys` ("HUMAN:id", "AGENT:id") serve "rooms of this participant"
 * (room-directory.ts); `revision` makes participant changes compare-and-set.
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

/** What the room lists need of a room (room-directory.ts). */
export interface RoomListing {
  id: string;
  private: boolean;
  /** participantKey of each participant. */
  memberKeys: string[];
}

const LISTING_FIELDS = { _id: 1, private: 1, memberKeys: 1 } as const;
const toListing = (document: Pick<RoomDocument, '_id' | 'private' | 'memberKeys'>): RoomListing => ({
  id: document._id,
  private: document.private,
  memberKeys: document.memberKeys,
});

function fromDocument(document: RoomDocument): Room {
  const { _id, metadata, memberKeys: _memberKeys, revision: _revision, ...rest } = document;
  return { id: _id, metadata: JSON.parse(metadata) as Room['metadata'], ...rest };
}

function toDocumentFields(participants: Participant[]) {
  return {
    participants,
    memberKeys: participants.map((member) => participantKey({ type: member.type, id: member.participantId })),
  };
}

export class RoomStore {
  /** Every room created and every change of participants, for the room lists of every process (room-directory.ts). */
  readonly changes: ChangeLog;

  constructor(private readonly store: Store) {
    this.changes = new ChangeLog(store, ROOMS_COLLECTION);
  }

  /** None: rooms are read by `_id`, and lists from the room directory. */
  static indexes(): IndexDescription[] {
    return [];
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
    await this.changes.record(document._id);
    return fromDocument(document);
  }

  async findById(roomId: string): Promise<Room | null> {
    const document = await this.rooms.findOne({ _id: roomId });
    return document ? fromDocument(document) : null;
  }

  /** Every room, with only what the lists need: the one read of the whole collection, made when a listing is read whole. */
  async listings(): Promise<RoomListing[]> {
    const documents = await this.rooms.find({}, { projection: LISTING_FIELDS }).toArray();
    return documents.map(toListing);
  }

  /** One room as `listings` gives it; null when there is none. */
  async listing(roomId: string): Promise<RoomListing | null> {
    const document = await this.rooms.findOne({ _id: roomId }, { projection: LISTING_FIELDS });
    return document ? toListing(document) : null;
  }

  async addParticipant(roomId: string, participant: Participant): Promise<{ change: ParticipantChange; room?: Room }> {
    return this.changeParticipants(roomId, (room) => {
      if (isParticipant(room, { type: participant.type, id: participant.participantId }))
        return ParticipantChange.UNCHANGED;
      if (room.participants.length >= room.maxParticipants) return ParticipantChange.ROOM_FULL;
      return [...room.participants, participant];
    });
  }

  async removeParticipant(
    roomId: string,
    participant: Participant,
  ): Promise<{ change: ParticipantChange; room?: Room }> {
    return this.changeParticipants(roomId, (room) => {
      const remaining = room.participants.filter(
        (member) => member.type !== participant.type || member.participantId !== participant.participantId,
      );
      return remaining.length === room.participants.length ? ParticipantChange.NOT_A_PARTICIPANT : remaining;
    });
  }

  /**
   * Read, change, write only if nobody changed the room meanwhile (its revision): the service uses no
   * transactions (src/store/mongo.ts), and this keeps two concurrent changes from overwriting each other.
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
      if (result.matchedCount === 1) {
        await this.changes.record(roomId);
        return { change: ParticipantChange.DONE, room: { ...room, participants: outcome, updatedAt } };
      }
    }
    throw new ApiError(ErrorCode.CONFLICT, "The room's participants are changing concurrently; try again");
  }
}
