import { ParticipantType, participantOf, type ParticipantRef } from '../auth/participant';
import { PrincipalKind, samePrincipal, type Principal } from '../auth/principal';

export const DEFAULT_ROOM_TYPE = 'CHAT';
export const DEFAULT_MAX_PARTICIPANTS = 100;

/** A room member as the room record lists it (the spec's creation body shape). */
export interface Participant {
  type: ParticipantType;
  participantId: string;
}

export interface Room {
  id: string;
  name: string;
  type: string;
  description: string;
  maxParticipants: number;
  private: boolean;
  metadata: Record<string, unknown> | null;
  participants: Participant[];
  createdAt: Date;
  updatedAt: Date;
  /** The principal that created the room; absent on rooms stored before creators were recorded, which only admins manage. */
  createdBy?: Principal;
}

/** A room as its creator describes it, before the service gives it an id, a creator and timestamps. */
export type NewRoom = Omit<Room, 'id' | 'createdAt' | 'updatedAt' | 'createdBy'>;

/** The room record of the HTTP answers: `roomId` and `id` carry the same value. */
export function toRoomRecord(room: Room) {
  return {
    roomId: room.id,
    id: room.id,
    name: room.name,
    type: room.type,
    description: room.description,
    maxParticipants: room.maxParticipants,
    private: room.private,
    metadata: room.metadata,
    participants: room.participants,
    createdAt: room.createdAt.toISOString(),
    updatedAt: room.updatedAt.toISOString(),
  };
}

export function isParticipant(room: Pick<Room, 'participants'>, participant: ParticipantRef): boolean {
  return room.participants.some(
    (member) => member.type === participant.type && member.participantId === participant.id,
  );
}

/** Whether `principal` may change the room (its participants): its creator and admins. */
export function canManageRoom(principal: Principal, room: Pick<Room, 'createdBy'>): boolean {
  if (principal.kind === PrincipalKind.ADMIN) return true;
  return room.createdBy !== undefined && samePrincipal(room.createdBy, principal);
}

export const RoomAccess = {
  ALLOWED: 'allowed',
  /** The caller, with a credential or without, may not learn that the room exists. */
  HIDDEN: 'hidden',
} as const;
export type RoomAccess = (typeof RoomAccess)[keyof typeof RoomAccess];

/** Who may read a room and its messages: a public room anyone; a private one its participants, its creator and admins. */
export function readAccess(
  room: Pick<Room, 'private' | 'participants' | 'createdBy'>,
  principal: Principal | undefined,
): RoomAccess {
  if (!room.private) return RoomAccess.ALLOWED;
  // Anonymous too: a 401 here where an unknown room is 404 would tell which room ids exist.
  if (!principal) return RoomAccess.HIDDEN;
  if (canManageRoom(principal, room)) return RoomAccess.ALLOWED;
  const participant = participantOf(principal);
  return participant && isParticipant(room, participant) ? RoomAccess.ALLOWED : RoomAccess.HIDDEN;
}
