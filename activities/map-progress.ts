import { progressOf } from '../src/maps/map-result';
import type { TaskStore } from '../src/tasks/task-store';
import { TaskEventType } from '../src/task-events/task-event';
import type { MapProgress } from '../workflows/map-contract';

/** The map's counts, progress and message on its task after one of its chunks ended: a progress event of its log. */
export function recordMapProgressActivity(taskStore: TaskStore) {
  return async function recordMapProgress({ mapTaskId, compositionId, counts }: MapProgress): Promise<void> {
    const progress = progressOf(counts);
    await taskStore.updateIfNotEnded(
      { taskId: mapTaskId, ...(compositionId === undefined ? {} : { compositionId }) },
      { map: counts, ...progress, event: { type: TaskEventType.PROGRESS, ...progress } },
    );
  };
}
