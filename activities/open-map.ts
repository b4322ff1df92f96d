import { ApplicationFailure } from '@temporalio/activity';
import { MAX_ITEMS_PER_CHUNK } from '../src/config/history-budget';
import { progressOf } from '../src/maps/map-result';
import { MapSourceError, type MapSources } from '../src/maps/map-source';
import type { TaskStore } from '../src/tasks/task-store';
import type { OpenedMap, OpenMapInput } from '../workflows/map-contract';
import { TaskErrorCode, TaskPhase } from '../workflows/task-types';

/**
 * Reads the array a map runs over and checks it before any item exists: MISSING_FIELD, TYPE_MISMATCH
 * or MAP_TOO_LARGE (above `maxMapItems`) fail the map, for good. Records the array's length on the
 * map task, which moves to calling_agent.
 */
export function openMapActivity(taskStore: TaskStore, sources: MapSources, maxMapItems: number) {
  return async function openMap({ mapTaskId, compositionId, sourceTaskId, field }: OpenMapInput): Promise<OpenedMap> {
    let elements: unknown[];
    try {
      elements = await sources.read(sourceTaskId, field);
    } catch (error) {
      if (!(error instanceof MapSourceError)) throw error;
      const { code, message, details } = error.error;
      throw ApplicationFailure.nonRetryable(message, code, ...(details === undefined ? [] : [details]));
    }
    if (elements.length > maxMapItems) {
      throw ApplicationFailure.nonRetryable(
        `forEach reads ${elements.length} elements of field "${field}" of task ${sourceTaskId}: more than MAX_MAP_ITEMS (${maxMapItems})`,
        TaskErrorCode.MAP_TOO_LARGE,
        { elements: elements.length, maxMapItems },
      );
    }
    const map = { total: elements.length, completed: 0, failed: 0, cancelled: 0 };
    await taskStore.updateUnconditionally(
      { taskId: mapTaskId, ...(compositionId === undefined ? {} : { compositionId }) },
      // The map's items are called from now on: it no longer waits for its parents.
      { map, ...progressOf(map), phase: TaskPhase.CALLING_AGENT },
    );
    return { total: elements.length, maxItemsPerChunk: MAX_ITEMS_PER_CHUNK };
  };
}
