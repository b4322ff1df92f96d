// The agent asked for a person's input: the request announced in the task's room, the answer
// waited for with a timer named after it (within the task's timeoutMs), then delivered to the agent.
import { condition, isCancellation, patched } from '@temporalio/workflow';
import { inputDeliveries, inputDeliveryOptions, roomDeliveryAt, roomDeliveryOptions } from './activity-stubs';
import { activityError, failure } from './outcomes';
import { describe, type RunningTask } from './running-task';
import { agentSocketOf, announceInRoom } from './task-room';
import { TaskErrorCode, TaskStatus, TaskWait, type InputRequestNotice, type TaskOutcome } from './task-types';
import { INPUT_REQUESTS } from './versions';

/**
 * Step, when the agent asked for input: after it, the task waits for the agent again. An outcome
 * when the task ends here: no input came, or it could not be delivered. A report that comes
 * meanwhile ends the wait, and the task.
 */
export async function inputTaken(
  running: RunningTask,
  request: InputRequestNotice,
  startedAt: number,
  attempt: number,
): Promise<TaskOutcome | undefined> {
  const { task, inbox } = running;
  inbox.takeUp(request);
  if (!patched(INPUT_REQUESTS)) return undefined;
  const { requestId, message, inputSchema } = request;
  if (task.room) {
    await announceInRoom(running, task.room, {
      status: TaskStatus.INPUT_REQUIRED,
      requestId,
      message,
      ...(inputSchema === undefined ? {} : { inputSchema }),
    });
  }
  running.waitFor(TaskWait.INPUT);
  const remainingMs = task.timeoutMs - (Date.now() - startedAt);
  const answered =
    remainingMs > 0 &&
    (await condition(() => inbox.report !== undefined || inbox.isAnswered(requestId), remainingMs, {
      summary: `input for task ${task.taskId}: ${message.slice(0, 200)}`,
    }));
  if (inbox.report) return undefined;
  if (!answered) {
    return failure(
      {
        code: TaskErrorCode.INPUT_TIMEOUT,
        message: `No input came within the task's ${task.timeoutMs} ms for the agent's request: ${message.slice(0, 1_000)}`,
      },
      attempt,
    );
  }
  running.waitFor(TaskWait.INPUT_DELIVERY);
  try {
    await deliverInput(running, requestId);
  } catch (error) {
    if (isCancellation(error)) throw error;
    return failure(activityError(error), attempt);
  }
  if (task.room) await announceInRoom(running, task.room, { status: TaskStatus.PENDING, requestId });
  return undefined;
}

/** The answer over the agent's room socket when some API process holds it, else a signed POST. */
async function deliverInput(running: RunningTask, requestId: string): Promise<void> {
  const { taskId, agentId, operation, room } = running.task;
  if (room) {
    const queue = await agentSocketOf(running, room);
    if (queue !== null) {
      const sent = await roomDeliveryAt(queue)
        .deliverTaskInput.executeWithOptions(
          { ...roomDeliveryOptions, taskQueue: queue, summary: `TASK_INPUT frame: ${describe(running)}` },
          [{ roomId: room.roomId, taskId, agentId, requestId }],
        )
        .catch((error: unknown) => {
          if (isCancellation(error)) throw error;
          return false;
        });
      if (sent) return;
    }
  }
  await inputDeliveries.deliverTaskInput.executeWithOptions(
    { ...inputDeliveryOptions, summary: `input to ${describe(running)} (task ${taskId})` },
    [{ taskId, agentId, operation, requestId }],
  );
}
