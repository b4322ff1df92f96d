import { createHash } from 'node:crypto';
import type { TaskClaims } from '../src/tasks/task-claims';
import type { TaskStore } from '../src/tasks/task-store';
import { isLive, TaskPhase, TaskStatus } from '../workflows/task-types';
import type {
  RoomDeliveryActivities,
  TaskFrameInput,
  TaskInputFrameInput,
  TaskUpdateInput,
} from '../workflows/room-delivery-contract';
import { FrameType, SystemEvent } from '../src/rooms/frames';
import { ParticipantType, type ParticipantRef } from '../src/auth/participant';
import { remember } from '../src/rooms/remember';
import type { RoomHub } from '../src/rooms/room-hub';
import type { DeliveredTasks } from '../src/room-tasks/delivered-tasks';

/**
 * How many TASK frames and task_updates a process remembers having sent. Temporal retries a
 * delivery activity within its 5 s bound (the workflow's roomDeliveryOptions), so only the latest
 * matter.
 */
const REMEMBERED_FRAMES = 10_000;

/**
 * Activities of an API process's own delivery queue (SocketPresence.queue): the workflow routes
 * them to the process that holds the sockets, so they act on its RoomHub. An attempt may run again
 * after its frame went out (Temporal timed it out, or its answer was lost): each frame goes out of
 * a process once.
 */
export function roomDeliveryActivities(
  hub: RoomHub,
  taskStore: TaskStore,
  claims: TaskClaims,
  deliveredTasks: DeliveredTasks,
) {
  /** Tasks whose TASK frame reached a socket of this process. */
  const sentTasks = new Set<string>();
  /** Ids of the task_updates this process published. */
  const publishedUpdates = new Set<string>();
  return {
    /** False when the agent's socket is gone: the workflow then calls it over HTTP. */
    async deliverTaskFrame({
      taskId,
      agentId,
      operation,
      params,
      roomId,
      requestedBy,
      workflowId,
    }: TaskFrameInput): Promise<boolean> {
      // The agent has it; should its socket have closed since, DeliveredTasks told the workflow.
      if (sentTasks.has(taskId)) return true;
      const agent: ParticipantRef = { type: ParticipantType.AGENT, id: agentId };
      if (!hub.isConnected(roomId, agent)) return false;
      // Before the frame: a fast TASK_RESULT must find the task awaiting it, not be overwritten.
      await taskStore.updateIfNotEnded({ taskId }, { phase: TaskPhase.AWAITING_AGENT_REPORT });
      // An earlier attempt, still running when this one started, may have sent it meanwhile.
      if (sentTasks.has(taskId)) return true;
      deliveredTasks.delivered(roomId, agentId, taskId, workflowId);
      const sent = hub.sendTo(roomId, agent, {
        type: FrameType.TASK,
        data: { taskId, operation, params, roomId, requestedBy },
      });
      if (sent) remember(sentTasks, taskId, REMEMBERED_FRAMES);
      return sent;
    },

    /** The answer to the agent's input request over its socket (TASK_INPUT); false when its socket is gone. */
    async deliverTaskInput({ roomId, taskId, agentId, requestId }: TaskInputFrameInput): Promise<boolean> {
      const agent: ParticipantRef = { type: ParticipantType.AGENT, id: agentId };
      if (!hub.isConnected(roomId, agent)) return false;
      const input = await claims.answeredInput(taskId, requestId);
      return hub.sendTo(roomId, agent, { type: FrameType.TASK_INPUT, data: { taskId, requestId, input } });
    },

    /**
     * Not stored: a room's history holds messages only (seq-ordered), like participant events; the
     * task itself stays readable at GET /tasks/{taskId}.
     */
    async publishTaskUpdate({ roomId, taskId, agentId, outcome }: TaskUpdateInput): Promise<void> {
      const { requestId } = outcome;
      if (!isLive(outcome.status)) deliveredTasks.ended(roomId, agentId, taskId);
      const id = taskUpdateId(taskId, outcome.status, requestId);
      if (publishedUpdates.has(id)) return;
      remember(publishedUpdates, id, REMEMBERED_FRAMES);
      // The answer to an input request is announced with the input, which only the task store holds.
      const answer =
        outcome.status === TaskStatus.PENDING && requestId !== undefined
          ? await claims.findInput(taskId, requestId)
          : undefined;
      hub.publish(roomId, {
        type: FrameType.SYSTEM,
        data: {
          id,
          roomId,
          event: SystemEvent.TASK_UPDATE,
          taskId,
          agentId,
          status: outcome.status,
          ...(outcome.result === undefined ? {} : { result: outcome.result }),
          ...(outcome.error === undefined ? {} : { error: outcome.error }),
          ...(outcome.skipReason === undefined ? {} : { skipReason: outcome.skipReason }),
          ...(requestId === undefined ? {} : { requestId }),
          ...(outcome.message === undefined ? {} : { message: outcome.message }),
          ...(outcome.inputSchema === undefined ? {} : { inputSchema: outcome.inputSchema }),
          ...(answer === undefined ? {} : { input: answer.input }),
          timestamp: new Date().toISOString(),
        },
      });
    },
  } satisfies RoomDeliveryActivities;
}

/**
 * A task_update's id: a UUID (RFC 9562 version 8) made of the SHA-256 of the task and its status,
 * so that every attempt and every process names the same update alike, and a client that gets it
 * twice can tell.
 */
function taskUpdateId(taskId: string, status: string, requestId?: string): string {
  const named = `task_update\n${taskId}\n${status}${requestId === undefined ? '' : `\n${requestId}`}`;
  const hex = createHash('sha256').update(named).digest('hex');
  const variant = (0x8 | (parseInt(hex[16], 16) & 0x3)).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
