import type { Context } from 'koa';
import { PrincipalKind, requireKind, type AuthState, type Principal } from '../auth/principal';
import { ApiError, ErrorCode, forbidden, invalid, notFound } from '../http/errors';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { validator } from '../http/validate';
import { CloseCode, messageFrame } from './frames';
import { messageInput } from './message-input';
import type { MessageStore, PageCursor } from './message-store';
import { participantOf, participantKey, ParticipantType } from '../auth/participant';
import { canManageRoom, readAccess, RoomAccess, toRoomRecord, type NewRoom, type Participant, type Room } from './room';
import type { RoomHub } from './room-hub';
import type { RoomDirectory } from './room-directory';
import { ParticipantChange, type RoomStore } from './room-store';
import {
  CREATE_ROOM_SCHEMA,
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  MESSAGE_HISTORY_QUERY_SCHEMA,
  PARTICIPANT_QUERY_SCHEMA,
  PARTICIPANT_SCHEMA,
  ROOM_LIST_QUERY_SCHEMA,
  SEND_MESSAGE_SCHEMA,
  type MessageHistoryQuery,
  type ParticipantQuery,
  type RoomListQuery,
} from './schemas';

export interface RoomRoutesDeps {
  rooms: RoomStore;
  /** The lists: served from memory, so that they do not read the whole collection. */
  directory: RoomDirectory;
  messages: MessageStore;
  hub: RoomHub;
  maxMessageChars: number;
  /** Whether `principal` may see the agent with this id: rooms list only agents that exist and that whoever lists them may see. */
  agentVisible(principal: Principal, agentId: string): Promise<boolean>;
}

const readCreateRoom = validator<NewRoom>(CREATE_ROOM_SCHEMA, 'room');
const readParticipant = validator<Participant>(PARTICIPANT_SCHEMA, 'participant');
const readParticipantQuery = validator<ParticipantQuery>(PARTICIPANT_QUERY_SCHEMA, 'query');
const readRoomListQuery = validator<RoomListQuery>(ROOM_LIST_QUERY_SCHEMA, 'query');
const readHistoryQuery = validator<MessageHistoryQuery>(MESSAGE_HISTORY_QUERY_SCHEMA, 'query');

export const ROOM_ROUTES = routeTable({
  versioned: false,
  operations: {
    'POST /rooms': {
      summary: 'Create a room',
      credential: 'adminOrService',
      body: CREATE_ROOM_SCHEMA,
      success: [201, 'The room record'],
    },
    'GET /rooms': {
      summary: 'Public rooms',
      credential: 'none',
      query: ROOM_LIST_QUERY_SCHEMA,
      success: [200, 'Array of room records'],
    },
    'GET /user/rooms': {
      summary: 'Rooms the caller participates in',
      credential: 'any',
      query: ROOM_LIST_QUERY_SCHEMA,
      success: [200, 'Array of room records'],
    },
    'GET /rooms/:roomId': { summary: 'One room', credential: 'none', success: [200, 'The room record'] },
    'POST /rooms/:roomId/participants': {
      summary: 'Add a participant (an agent the caller may see)',
      credential: 'adminOrService',
      body: PARTICIPANT_SCHEMA,
      success: [201, 'The room record'],
    },
    'DELETE /rooms/:roomId/participants/:participantId': {
      summary: 'Remove a participant (type says which when a human and an agent share the id)',
      credential: 'adminOrService',
      query: PARTICIPANT_QUERY_SCHEMA,
      success: [200, 'The room record'],
    },
    'GET /rooms/:roomId/messages': {
      summary: 'History: the newest limit messages before a message, or those after a seq',
      credential: 'none',
      query: MESSAGE_HISTORY_QUERY_SCHEMA,
      success: [200, 'Array of messages, oldest first'],
    },
    'POST /rooms/:roomId/messages': {
      summary: 'Send a message as the caller',
      credential: 'any',
      body: SEND_MESSAGE_SCHEMA,
      success: [201, 'The stored message'],
    },
  },
});

/** Rooms and messages over HTTP (docs/api.md, "Rooms and messages"). Room paths are bare. */
export function createRoomRoutes(deps: RoomRoutesDeps): RouteModule {
  const router = new DocumentedRouter(ROOM_ROUTES);
  const readMessage = messageInput(deps.maxMessageChars);

  router.serve('POST /rooms', async (ctx) => {
    const principal = requireKind(ctx, PrincipalKind.ADMIN, PrincipalKind.SERVICE);
    const body = readCreateRoom(ctx.request.body);
    if (body.participants.length > body.maxParticipants) {
      throw invalid(
        `participants lists ${body.participants.length}, more than maxParticipants (${body.maxParticipants})`,
      );
    }
    const keys = body.participants.map((member) => participantKey({ type: member.type, id: member.participantId }));
    const repeated = keys.find((key, index) => keys.indexOf(key) !== index);
    if (repeated) throw invalid(`participants lists ${repeated} more than once`);
    for (const participant of body.participants) await requireVisibleAgent(deps, principal, participant);
    ctx.status = 201;
    ctx.body = toRoomRecord(await deps.rooms.create(body, principal));
  });

  router.serve('GET /rooms', async (ctx) => {
    const query = readRoomListQuery(ctx.query);
    ctx.body = (await deps.directory.listPublic(pageSize(query.limit), query.after)).map(toRoomRecord);
  });

  router.serve('GET /user/rooms', async (ctx) => {
    const principal = requireKind(ctx, PrincipalKind.HUMAN, PrincipalKind.AGENT);
    const query = readRoomListQuery(ctx.query);
    ctx.body = (
      await deps.directory.listForParticipant(participantOf(principal)!, pageSize(query.limit), query.after)
    ).map(toRoomRecord);
  });

  router.serve('GET /rooms/:roomId', async (ctx) => {
    ctx.body = toRoomRecord(await readableRoom(ctx, deps, ctx.params.roomId));
  });

  router.serve('POST /rooms/:roomId/participants', async (ctx) => {
    const { principal } = await manageableRoom(ctx, deps, ctx.params.roomId);
    const participant = readParticipant(ctx.request.body);
    await requireVisibleAgent(deps, principal, participant);
    const { change, room } = await deps.rooms.addParticipant(ctx.params.roomId, participant);
    if (change === ParticipantChange.NO_ROOM) throw notFound('Room');
    if (change === ParticipantChange.ROOM_FULL)
      throw new ApiError(
        ErrorCode.CONFLICT,
        `The room already lists maxParticipants (${room!.maxParticipants}) participants`,
      );
    ctx.status = change === ParticipantChange.DONE ? 201 : 200;
    ctx.body = toRoomRecord(room!);
  });

  router.serve('DELETE /rooms/:roomId/participants/:participantId', async (ctx) => {
    const { room } = await manageableRoom(ctx, deps, ctx.params.roomId);
    const member = namedMember(room, ctx.params.participantId, readParticipantQuery(ctx.query).type);
    const { change, room: updated } = await deps.rooms.removeParticipant(room.id, member);
    if (change === ParticipantChange.NO_ROOM) throw notFound('Room');
    if (change === ParticipantChange.NOT_A_PARTICIPANT) throw notFound('Participant');
    if (updated!.private) {
      deps.hub.disconnect(
        room.id,
        { type: member.type, id: member.participantId },
        CloseCode.REMOVED_FROM_ROOM,
        'Removed from this private room',
      );
    }
    ctx.body = toRoomRecord(updated!);
  });

  router.serve('GET /rooms/:roomId/messages', async (ctx) => {
    const query = readHistoryQuery(ctx.query);
    const room = await readableRoom(ctx, deps, ctx.params.roomId);
    const cursor = await pageCursor(deps.messages, room.id, query);
    ctx.body = (await deps.messages.page(room.id, cursor, pageSize(query.limit))).map(messageFrame);
  });

  router.serve('POST /rooms/:roomId/messages', async (ctx) => {
    const principal = requireKind(ctx, PrincipalKind.HUMAN, PrincipalKind.AGENT);
    const room = await readableRoom(ctx, deps, ctx.params.roomId);
    const body = readMessage(ctx.request.body);
    const message = await deps.hub.sendMessage({ roomId: room.id, sender: participantOf(principal)!, ...body });
    ctx.status = 201;
    ctx.body = messageFrame(message);
  });

  return router.module();
}

/**
 * The room when the caller may read it: 404 unknown, or private and the caller (anonymous or not)
 * may not read it, with the same body, so that a private room is not admitted to exist.
 */
async function readableRoom(ctx: Context, deps: RoomRoutesDeps, roomId: string): Promise<Room> {
  const room = await deps.rooms.findById(roomId);
  const access = room ? readAccess(room, (ctx.state as AuthState).principal) : RoomAccess.HIDDEN;
  if (access === RoomAccess.HIDDEN) throw notFound('Room');
  return room!;
}

/** The room when the caller may manage it: admin and service keys only (else 403), 404 as `readableRoom`, 403 for a room it may read but did not create. */
async function manageableRoom(
  ctx: Context,
  deps: RoomRoutesDeps,
  roomId: string,
): Promise<{ principal: Principal; room: Room }> {
  const principal = requireKind(ctx, PrincipalKind.ADMIN, PrincipalKind.SERVICE);
  const room = await readableRoom(ctx, deps, roomId);
  if (!canManageRoom(principal, room)) throw forbidden("Only the room's creator or an admin may manage it");
  return { principal, room };
}

/** 404 for an agent the caller may not see, as for one that does not exist: a room must not reveal private agents. */
async function requireVisibleAgent(
  deps: RoomRoutesDeps,
  principal: Principal,
  participant: Participant,
): Promise<void> {
  if (participant.type === ParticipantType.AGENT && !(await deps.agentVisible(principal, participant.participantId))) {
    throw new ApiError(ErrorCode.AGENT_NOT_FOUND, `No agent ${participant.participantId} is registered`);
  }
}

/** The member with that id; when a human and an agent share it, `type` says which (400 without). */
function namedMember(room: Room, participantId: string, type: ParticipantType | undefined): Participant {
  const members = room.participants.filter(
    (member) => member.participantId === participantId && (type === undefined || member.type === type),
  );
  if (members.length === 0) throw notFound('Participant');
  if (members.length > 1)
    throw invalid(
      `Both a human and an agent named ${participantId} take part: say which with ?type=HUMAN or ?type=AGENT`,
    );
  return members[0];
}

function pageSize(limit: string | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_SIZE;
  const size = Number(limit);
  if (size < 1 || size > MAX_PAGE_SIZE) throw invalid(`limit must be from 1 to ${MAX_PAGE_SIZE}`);
  return size;
}

async function pageCursor(messages: MessageStore, roomId: string, query: MessageHistoryQuery): Promise<PageCursor> {
  if (query.before !== undefined && query.after !== undefined) throw invalid('Give at most one of before and after');
  if (query.after !== undefined) return { kind: 'after', seq: Number(query.after) };
  if (query.before === undefined) return { kind: 'latest' };
  const seq = await messages.findSeq(roomId, query.before);
  if (seq === undefined) throw invalid(`before names no message of this room: ${query.before}`);
  return { kind: 'before', seq };
}
