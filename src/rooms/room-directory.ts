import { StampedCopy } from '../store/change-stamp';
import { byId, firstAfter } from '../store/first-after';
import { isParticipant, participantKey, type ParticipantRef, type Room } from './room';
import type { RoomListing, RoomStore } from './room-store';

/** A listing older than this is read again even when no change was announced (a process that died between a write and its announcement). */
export const ROOM_LISTING_MAX_AGE_MS = 60_000;

interface Listings {
  /** Public rooms in id order. */
  publicRooms: RoomListing[];
  /** Each participant's rooms (by participantKey) in id order. */
  byMember: Map<string, RoomListing[]>;
}

/**
 * Which rooms are public, and whose rooms each room is, in memory: FerretDB reads the whole
 * collection for any query beyond `_id`, and `GET /rooms` needs no credential. Every room creation
 * and change of participants, in any process, bumps the rooms' ChangeStamp, and the listing is read
 * again when it differs (StampedCopy). A page's rooms are then read by `_id` and checked again.
 */
export class RoomDirectory {
  private readonly copy: StampedCopy<Listings>;

  constructor(private readonly rooms: RoomStore) {
    this.copy = new StampedCopy(rooms.changes, () => this.read(), ROOM_LISTING_MAX_AGE_MS);
  }

  /** Public rooms in id order, `limit` of them after the room `after`. */
  async listPublic(limit: number, after?: string): Promise<Room[]> {
    const { publicRooms } = await this.copy.current();
    const rooms = await this.readPage(publicRooms, limit, after);
    return rooms.filter((room) => !room.private);
  }

  /** The rooms listing `participant`, in id order, `limit` of them after the room `after`. */
  async listForParticipant(participant: ParticipantRef, limit: number, after?: string): Promise<Room[]> {
    const { byMember } = await this.copy.current();
    const rooms = await this.readPage(byMember.get(participantKey(participant)) ?? [], limit, after);
    return rooms.filter((room) => isParticipant(room, participant));
  }

  private async readPage(sorted: RoomListing[], limit: number, after: string | undefined): Promise<Room[]> {
    const start = firstAfter(sorted, after);
    const rooms = await Promise.all(sorted.slice(start, start + limit).map((listing) => this.rooms.findById(listing.id)));
    return rooms.filter((room): room is Room => room !== null);
  }

  private async read(): Promise<Listings> {
    const listings = (await this.rooms.listings()).sort(byId);
    const byMember = new Map<string, RoomListing[]>();
    for (const listing of listings) {
      for (const key of listing.memberKeys) {
        const rooms = byMember.get(key);
        if (rooms) rooms.push(listing);
        else byMember.set(key, [listing]);
      }
    }
    return { publicRooms: listings.filter((listing) => !listing.private), byMember };
  }
}
