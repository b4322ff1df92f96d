import { randomUUID } from 'node:crypto';
import type { ApiError } from '../http/errors';
import type { Message } from './message-store';
import type { ParticipantRef } from '../auth/participant';

/** Every frame type of the room WebSocket, both directions. */
export const FrameType = {
  MESSAGE: 'MESSAGE',
  SYSTEM: 'SYSTEM',
  ERROR: 'ERROR',
  /** To an agent: a task of the room for it. */
  TASK: 'TASK',
  /** From an agent: the outcome of its TASK. */
  TASK_RESULT: 'TASK_RESULT',
  /** From a participant: start a task in the room. */
  TASK_REQUEST: 'TASK_REQUEST',
  /** To the asker: the task its TASK_REQUEST started. */
  TASK_CREATED: 'TASK_CREATED',
  /** From a person: the answer to a task's input request. To an agent: that answer, for its task. */
  TASK_INPUT: 'TASK_INPUT',
} as const;
export type FrameType = (typeof FrameType)[keyof typeof FrameType];

/** Frame types a client may send. */
export const CLIENT_FRAME_TYPES: readonly string[] = [
  FrameType.MESSAGE,
  FrameType.TASK_REQUEST,
  FrameType.TASK_RESULT,
  FrameType.TASK_INPUT,
];

/** WebSocket close codes the service sends: standard ones, and 4403 from the application range (4000-4999). */
export const CloseCode = {
  SERVER_SHUTTING_DOWN: 1001,
  HISTORY_UNAVAILABLE: 1011,
  REMOVED_FROM_ROOM: 4403,
} as const;

export const SystemEvent = {
  PARTICIPANT_JOINED: 'participant_joined',
  PARTICIPANT_LEFT: 'participant_left',
  TASK_UPDATE: 'task_update',
} as const;
export type SystemEvent = (typeof SystemEvent)[keyof typeof SystemEvent];

export interface Frame {
  type: FrameType;
  data: Record<string, unknown>;
}

/** A stored message as frames and the history carry it. */
export function messageFrame(message: Message): Frame {
  return {
    type: FrameType.MESSAGE,
    data: {
      id: message.id,
      roomId: message.roomId,
      seq: message.seq,
      content: message.content,
      sender: message.sender,
      timestamp: message.timestamp.toISOString(),
      ...(message.metadata === undefined ? {} : { metadata: message.metadata }),
    },
  };
}

export function participantEventFrame(roomId: string, event: SystemEvent, participant: ParticipantRef): Frame {
  return {
    type: FrameType.SYSTEM,
    data: { id: randomUUID(), roomId, event, participant, timestamp: new Date().toISOString() },
  };
}

/** `requestId` ties the error to the TASK_REQUEST it answers. */
export function errorFrame(error: ApiError, requestId?: string): Frame {
  return {
    type: FrameType.ERROR,
    data: { code: error.code, message: error.message, ...(requestId === undefined ? {} : { requestId }) },
  };
}
