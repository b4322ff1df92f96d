import { IdIndex, KeyedIdIndex } from '../store/id-index';
import { LiveCopy } from '../store/live-copy';
import { RecordCache } from '../store/record-cache';
import { participantKey, type ParticipantRef } from '../auth/participant';
import { isParticipant, type Room } from './room';
import type { RoomListing, RoomStore } from './room-store';

/** The listing is read whole again, in the background, after this long, whatever the change log says. */
export const ROOM_LISTING_MAX_AGE_MS = 10 * 60_000;

/**
 * Which rooms are public, and whose rooms each room is, in memory: a query beyond `_id` may read the
 * whole collection (src/store/mongo.ts), and `GET /rooms` needs no credential. Every room created
 * and every change of participants, in any process, is recorded in the rooms' ChangeLog, and each
 * request first refreshes the rooms changed since (LiveCopy). A page's rooms come from a cache
 * that forgets a room when the log names it (only those not read since they changed are read by
 * `_id`), and are checked again.
 */
export class RoomDirectory {
  private allRooms = new IdIndex<RoomListing>();
  private publicRooms = new IdIndex<RoomListing>();
  private byMember = new KeyedIdIndex<RoomListing>();
  private readonly copy: LiveCopy<RoomListing[]>;
  private readonly records: RecordCache<Room>;

  constructor(private readonly rooms: RoomStore) {
    this.records = new RecordCache((roomId) => this.rooms.findById(roomId));
    this.copy = new LiveCopy(
      rooms.changes,
      {
        load: () => this.rooms.listings(),
        install: (listings) => this.install(listings),
        refresh: (ids) => this.refresh(ids),
      },
      ROOM_LISTING_MAX_AGE_MS,
    );
  }

  /** Starts reading the listing whole, so that the first request does not wait for all of it. */
  warm(): void {
    this.copy.catchUp().catch(() => undefined);
  }

  /** Public rooms in id order, `limit` of them after the room `after`. */
  async listPublic(limit: number, after?: string): Promise<Room[]> {
    await this.copy.catchUp();
    const rooms = await this.readRooms(this.publicRooms.page(limit, after));
    return rooms.filter((room) => !room.private);
  }

  /** The rooms listing `participant`, in id order, `limit` of them after the room `after`. */
  async listForParticipant(participant: ParticipantRef, limit: number, after?: string): Promise<Room[]> {
    await this.copy.catchUp();
    const rooms = await this.readRooms(this.byMember.get(participantKey(participant))?.page(limit, after) ?? []);
    return rooms.filter((room) => isParticipant(room, participant));
  }

  private readRooms(listings: RoomListing[]): Promise<Room[]> {
    return this.records.getMany(listings.map((listing) => listing.id));
  }

  private install(listings: RoomListing[]): void {
    const [allRooms, publicRooms, byMember] = [
      new IdIndex<RoomListing>(),
      new IdIndex<RoomListing>(),
      new KeyedIdIndex<RoomListing>(),
    ];
    for (const listing of listings) {
      allRooms.set(listing);
      if (!listing.private) publicRooms.set(listing);
      byMember.set(listing, listing.memberKeys);
    }
    [this.allRooms, this.publicRooms, this.byMember] = [allRooms, publicRooms, byMember];
    this.records.clear();
  }

  /** Rooms are never deleted; their participants change. */
  private async refresh(roomIds: string[]): Promise<void> {
    const read = await Promise.all(roomIds.map((roomId) => this.rooms.listing(roomId)));
    for (const roomId of roomIds) this.records.forget(roomId);
    for (const listing of read) {
      if (!listing) continue;
      this.byMember.delete(listing.id, this.allRooms.get(listing.id)?.memberKeys ?? []);
      this.allRooms.set(listing);
      if (!listing.private) this.publicRooms.set(listing);
      this.byMember.set(listing, listing.memberKeys);
    }
  }
}
