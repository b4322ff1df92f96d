// A room task's frames, through the API processes that hold the room's sockets: the TASK frame to
// the agent's socket, and the task_update SYSTEM frame to everyone in the room.
import { isCancellation, workflowInfo } from '@temporalio/workflow';
import { bookkeeping, bookkeepingOptions, roomDeliveryAt, roomDeliveryOptions } from './activity-stubs';
import { describe, type RunningTask } from './running-task';
import { TaskWait, type RoomOfTask, type TaskUpdate } from './task-types';

/** The delivery queue of an API process holding the agent's socket in the room; null when none does. */
export function agentSocketOf(running: RunningTask, room: RoomOfTask): Promise<string | null> {
  return bookkeeping.findAgentSocket.executeWithOptions(
    { ...bookkeepingOptions, summary: `find agent socket: ${describe(running)}` },
    [{ roomId: room.roomId, agentId: running.task.agentId }],
  );
}

/** Step: the TASK frame over the agent's socket, when some API process holds one; false otherwise. */
export async function deliverTaskFrame(
  running: RunningTask,
  room: RoomOfTask,
  params: Record<string, unknown>,
): Promise<boolean> {
  const { taskId, agentId, operation } = running.task;
  running.waitFor(TaskWait.ROOM_SOCKET);
  const queue = await agentSocketOf(running, room);
  if (queue === null) return false;
  try {
    return await roomDeliveryAt(queue).deliverTaskFrame.executeWithOptions(
      { ...roomDeliveryOptions, taskQueue: queue, summary: `TASK frame: ${describe(running)}` },
      [
        {
          taskId,
          agentId,
          operation,
          params,
          roomId: room.roomId,
          requestedBy: room.requestedBy,
          workflowId: workflowInfo().workflowId,
        },
      ],
    );
  } catch (error) {
    if (isCancellation(error)) throw error;
    return false;
  }
}

/** The task_update SYSTEM frame, to every API process with sockets to the room; a process gone misses it. */
export async function announceInRoom(running: RunningTask, room: RoomOfTask, outcome: TaskUpdate): Promise<void> {
  const { task } = running;
  const queues = await bookkeeping.findRoomSockets.executeWithOptions(
    { ...bookkeepingOptions, summary: `find room sockets: ${describe(running)}` },
    [room.roomId],
  );
  await Promise.all(
    queues.map((queue) =>
      roomDeliveryAt(queue)
        .publishTaskUpdate.executeWithOptions(
          { ...roomDeliveryOptions, taskQueue: queue, summary: `task_update: ${describe(running)}` },
          [{ roomId: room.roomId, taskId: task.taskId, agentId: task.agentId, outcome }],
        )
        .catch(() => undefined),
    ),
  );
}
