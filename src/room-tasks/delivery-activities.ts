import { randomUUID } from 'node:crypto';
import type { TaskIndex } from '../router/task-index';
import { TaskPhase, type Requester, type TaskOutcome } from '../router/task-types';
import { FrameType, SystemEvent } from '../rooms/frames';
import { ParticipantType, type ParticipantRef } from '../rooms/room';
import type { RoomHub } from '../rooms/room-hub';
import type { DeliveredTasks } from './delivered-tasks';

export interface TaskFrameInput {
  taskId: string;
  agentId: string;
  operation: string;
  params: Record<string, unknown>;
  roomId: string;
  requestedBy: Requester;
  /** Told if the agent's socket closes before it answers. */
  workflowId: string;
}

export interface TaskUpdateInput {
  roomId: string;
  taskId: string;
  agentId: string;
  outcome: TaskOutcome;
}

/**
 * Activities of an API process's own delivery queue (SocketPresence.queue): the workflow routes
 * them to the process that holds the sockets, so they act on its RoomHub.
 */
export function roomDeliveryActivities(hub: RoomHub, index: TaskIndex, deliveredTasks: DeliveredTasks) {
  return {
    /** False when the agent's socket is gone: the workflow then calls it over HTTP. */
    async deliverTaskFrame({ taskId, agentId, operation, params, roomId, requestedBy, workflowId }: TaskFrameInput): Promise<boolean> {
      const agent: ParticipantRef = { type: ParticipantType.AGENT, id: agentId };
      if (!hub.isConnected(roomId, agent)) return false;
      // Before the frame: a fast TASK_RESULT must find the task awaiting it, not be overwritten.
      await index.update(taskId, { phase: TaskPhase.AWAITING_AGENT_REPORT });
      deliveredTasks.delivered(roomId, agentId, taskId, workflowId);
      return hub.sendTo(roomId, agent, { type: FrameType.TASK, data: { taskId, operation, params, roomId, requestedBy } });
    },

    /**
     * Not stored: a room's history holds messages only (seq-ordered), like participant events; the
     * task itself stays readable at GET /tasks/{taskId}.
     */
    async publishTaskUpdate({ roomId, taskId, agentId, outcome }: TaskUpdateInput): Promise<void> {
      deliveredTasks.ended(roomId, agentId, taskId);
      hub.publish(roomId, {
        type: FrameType.SYSTEM,
        data: {
          id: randomUUID(),
          roomId,
          event: SystemEvent.TASK_UPDATE,
          taskId,
          agentId,
          status: outcome.status,
          ...(outcome.result === undefined ? {} : { result: outcome.result }),
          ...(outcome.error === undefined ? {} : { error: outcome.error }),
          timestamp: new Date().toISOString(),
        },
      });
    },
  };
}

export type RoomDeliveryActivities = ReturnType<typeof roomDeliveryActivities>;
