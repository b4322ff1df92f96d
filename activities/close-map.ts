import { joinedResult, MAX_MAP_RESULT_BYTES, progressOf } from '../src/maps/map-result';
import type { MapSlices } from '../src/maps/map-slices';
import type { TaskChange } from '../src/tasks/task-document';
import type { TaskStore } from '../src/tasks/task-store';
import type { CloseMapInput } from '../workflows/map-contract';
import { TaskErrorCode, TaskStatus, type TaskOutcome, type TaskResult } from '../workflows/task-types';

/**
 * Records how the map ended on its task, with its final counts: completed with its slices joined
 * in element order (RESULT_TOO_LARGE above MAX_MAP_RESULT_BYTES), failed, or cancelled. The
 * outcome it returns carries the result or error only when the workflow keeps it (a dependant
 * reads it); the callbacks read them from the task store.
 */
export function closeMapActivity(taskStore: TaskStore, slices: MapSlices) {
  return async function closeMap({
    mapTaskId,
    compositionId,
    counts,
    end,
    keepsResult,
  }: CloseMapInput): Promise<TaskOutcome> {
    const progress = progressOf(counts);
    let change: TaskChange;
    if (end.kind === 'completed') {
      const text = joinedResult(await slices.read(mapTaskId, end.chunkStarts));
      const bytes = Buffer.byteLength(text);
      change =
        bytes > MAX_MAP_RESULT_BYTES
          ? {
              status: TaskStatus.FAILED,
              error: {
                code: TaskErrorCode.RESULT_TOO_LARGE,
                message: `The map's result has ${bytes} bytes, more than the ${MAX_MAP_RESULT_BYTES} kept`,
                details: { bytes, maxBytes: MAX_MAP_RESULT_BYTES },
              },
            }
          : { status: TaskStatus.COMPLETED, resultText: text };
    } else {
      change =
        end.kind === 'failed' ? { status: TaskStatus.FAILED, error: end.error } : { status: TaskStatus.CANCELLED };
    }
    await taskStore.updateUnconditionally(
      { taskId: mapTaskId, ...(compositionId === undefined ? {} : { compositionId }) },
      { ...change, map: counts, ...progress },
    );
    const outcome: TaskOutcome = { status: change.status! };
    if (!keepsResult) return outcome;
    if (change.resultText !== undefined) outcome.result = JSON.parse(change.resultText) as TaskResult;
    if (change.error !== undefined) outcome.error = change.error;
    return outcome;
  };
}
