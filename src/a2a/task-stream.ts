import type { Context } from 'koa';
import type { LogSource } from '../task-events/log-reader';
import { LogStream, type LogStreamDeps } from '../task-events/log-stream';
import { TaskEventType, type TaskEvent } from '../task-events/task-event';
import type { TaskDocument } from '../tasks/task-document';
import type { TaskStore } from '../tasks/task-store';
import { isLive } from '../../workflows/task-types';
import { a2aState, a2aStatus, a2aTask, idsOf, resultArtifact } from './a2a-task';

export interface TaskStreamDeps extends LogStreamDeps {
  taskStore: TaskStore;
}

/** The A2A state each kind of event leaves a task in; the ending ones end the stream. */
const STATE_AFTER: Record<TaskEvent['type'], string> = {
  [TaskEventType.CREATED]: 'TASK_STATE_SUBMITTED',
  [TaskEventType.STARTED]: 'TASK_STATE_WORKING',
  [TaskEventType.ATTEMPT_FAILED]: 'TASK_STATE_WORKING',
  [TaskEventType.ACCEPTED]: 'TASK_STATE_WORKING',
  [TaskEventType.PROGRESS]: 'TASK_STATE_WORKING',
  [TaskEventType.INPUT_REQUIRED]: 'TASK_STATE_INPUT_REQUIRED',
  [TaskEventType.INPUT_RECEIVED]: 'TASK_STATE_WORKING',
  [TaskEventType.COMPLETED]: 'TASK_STATE_COMPLETED',
  [TaskEventType.FAILED]: 'TASK_STATE_FAILED',
  [TaskEventType.CANCELLED]: 'TASK_STATE_CANCELED',
  [TaskEventType.SKIPPED]: 'TASK_STATE_REJECTED',
};

/** What an event has to say beyond its state: the status message's data part. */
function dataOf(event: TaskEvent): unknown {
  switch (event.type) {
    case TaskEventType.ATTEMPT_FAILED:
      return { attempt: event.attempt, error: event.error };
    case TaskEventType.PROGRESS:
      return { ...(event.message === undefined ? {} : { message: event.message }), progress: event.progress };
    case TaskEventType.INPUT_REQUIRED:
      return { requestId: event.requestId, message: event.message, inputSchema: event.inputSchema };
    case TaskEventType.FAILED:
      return event.error;
    case TaskEventType.SKIPPED:
      return event.skipReason;
    default:
      return undefined;
  }
}

/**
 * Answers `ctx` with A2A's stream for one task, over Server-Sent Events: each event a JSON-RPC
 * response to request `rpcId` holding a StreamResponse, first the `task` as it stands, then a
 * `statusUpdate` for each change of its state (and each progress, failed attempt and input request,
 * with its data), the result as an `artifactUpdate`, and the end of the stream once the task ended.
 * It reads the task's event log, as `GET /tasks/{taskId}/events` does.
 */
export async function streamTask(
  ctx: Context,
  deps: TaskStreamDeps,
  rpcId: string | number | null,
  found: TaskDocument,
): Promise<void> {
  const { compositionId } = found;
  // The log's last seq before the task is read again: an event between the two comes twice, none is lost.
  const after = compositionId === undefined ? (found.eventSeq ?? 0) : await lastSeqOf(deps.taskStore, compositionId);
  const task = compositionId === undefined ? found : ((await deps.taskStore.find(found._id)) ?? found);
  const source: LogSource =
    compositionId === undefined ? { kind: 'task', taskId: task._id } : { kind: 'composition', compositionId };
  let state = a2aState(task);
  const stream = new LogStream(ctx, deps);
  const send = (id: string, result: Record<string, unknown>) => stream.send(id, { jsonrpc: '2.0', id: rpcId, result });
  send(String(after), { task: a2aTask(task) });
  if (!isLive(task.status)) {
    stream.end();
    return;
  }
  const ids = idsOf(task);
  stream.follow(source, {
    taskId: task._id,
    after,
    deliver: (events) => {
      for (const event of events) {
        const next = STATE_AFTER[event.type];
        const data = dataOf(event);
        if (next === state && data === undefined) continue;
        state = next;
        const id = String(event.seq);
        if (event.type === TaskEventType.COMPLETED)
          send(id, {
            artifactUpdate: { ...ids, artifact: resultArtifact(event.result), append: false, lastChunk: true },
          });
        send(id, { statusUpdate: { ...ids, status: a2aStatus(ids, next, event.at, data, `${task._id}-${id}`) } });
      }
    },
  });
}

async function lastSeqOf(taskStore: TaskStore, compositionId: string): Promise<number> {
  return (await taskStore.findCompositionLog(compositionId))?.eventSeq ?? 0;
}
