// The composition workflow's contract with the activities of an API process's own delivery queue,
// which act on the room sockets that process holds (activities/room-delivery.ts implements it).
// Inputs and results are in the histories of running workflows: guard a change with patched().
import type { Requester, TaskUpdate } from './task-types';

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
  /** The task's new state: its outcome, an input request, or (`pending` with a requestId) the answer to one. */
  outcome: TaskUpdate;
}

export interface TaskInputFrameInput {
  roomId: string;
  taskId: string;
  agentId: string;
  requestId: string;
}

/** The activities of an API process's delivery queue, by name (src/service/room-delivery-worker.ts registers them). */
export interface RoomDeliveryActivities {
  /** The TASK frame to the agent's socket; false when its socket is gone. */
  deliverTaskFrame: (frame: TaskFrameInput) => Promise<boolean>;
  /** The answer to the agent's input request over its socket (TASK_INPUT); false when its socket is gone. */
  deliverTaskInput: (frame: TaskInputFrameInput) => Promise<boolean>;
  /** The task_update SYSTEM frame to the process's sockets in the room. */
  publishTaskUpdate: (update: TaskUpdateInput) => Promise<void>;
}
