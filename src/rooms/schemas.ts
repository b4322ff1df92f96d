import { ParticipantType } from '../auth/participant';
import { DEFAULT_MAX_PARTICIPANTS, DEFAULT_ROOM_TYPE } from './room';

/**
 * JSON Schemas of what callers send to the rooms part, over HTTP and WebSocket. Checked once at
 * the edge with `validator`; exported by name for the OpenAPI document.
 */

/** Largest number of participants a room may declare. */
const MAX_ROOM_PARTICIPANTS = 10_000;
export const MAX_PAGE_SIZE = 200;
export const DEFAULT_PAGE_SIZE = 50;

export const PARTICIPANT_SCHEMA = {
  type: 'object',
  required: ['type', 'participantId'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: Object.values(ParticipantType) },
    participantId: { type: 'string', minLength: 1, maxLength: 256 },
  },
} as const;

export const CREATE_ROOM_SCHEMA = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    type: { type: 'string', minLength: 1, maxLength: 64, default: DEFAULT_ROOM_TYPE },
    description: { type: 'string', maxLength: 4000, default: '' },
    maxParticipants: { type: 'integer', minimum: 1, maximum: MAX_ROOM_PARTICIPANTS, default: DEFAULT_MAX_PARTICIPANTS },
    private: { type: 'boolean', default: false },
    metadata: { type: 'object', nullable: true, default: null },
    participants: { type: 'array', items: PARTICIPANT_SCHEMA, maxItems: MAX_ROOM_PARTICIPANTS, default: [] },
  },
} as const;

/** `data` of a client MESSAGE frame, and the body of POST /rooms/{roomId}/messages. Length is checked against MAX_MESSAGE_CHARS in code. */
export const SEND_MESSAGE_SCHEMA = {
  type: 'object',
  required: ['content'],
  additionalProperties: false,
  properties: {
    content: { type: 'string', pattern: '\\S', description: 'must not be empty or only whitespace' },
    metadata: { type: 'object' },
  },
} as const;

export interface SendMessage {
  content: string;
  metadata?: Record<string, unknown>;
}

/** The envelope of every client frame; its `type` decides how `data` is checked. */
export const CLIENT_FRAME_SCHEMA = {
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string' }, data: {} },
} as const;

export interface ClientFrame {
  type: string;
  data?: unknown;
}

const LIMIT = { type: 'string', pattern: '^[0-9]{1,6}$', description: 'must be a whole number' } as const;

/** GET /rooms and GET /user/rooms: `limit` rooms after the room `after`, in id order. */
/** DELETE /rooms/{roomId}/participants/{id}?type: which one, when a human and an agent share the id. */
export const PARTICIPANT_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { type: { type: 'string', enum: Object.values(ParticipantType) } },
} as const;

export interface ParticipantQuery {
  type?: ParticipantType;
}

export const ROOM_LIST_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: LIMIT, after: { type: 'string', minLength: 1 } },
} as const;

export interface RoomListQuery {
  limit?: string;
  after?: string;
}

/** GET /rooms/{roomId}/messages: `before` is a message id, `after` a seq; at most one of them. */
export const MESSAGE_HISTORY_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: LIMIT,
    before: { type: 'string', minLength: 1 },
    after: { type: 'string', pattern: '^[0-9]{1,15}$', description: 'must be a seq: a whole number' },
  },
} as const;

export interface MessageHistoryQuery {
  limit?: string;
  before?: string;
  after?: string;
}
