import { itemErrorOf, sliceOf, type MapSlices } from '../src/maps/map-slices';
import type { TaskStore } from '../src/tasks/task-store';
import type { ChunkEnd, CloseChunkInput } from '../workflows/map-contract';
import { itemTaskId } from '../workflows/task-types';

/** Joins the chunk's ended items into its slice of the map's result; returns its counts and the item that stopped it. */
export function closeChunkActivity(taskStore: TaskStore, slices: MapSlices) {
  return async function closeChunk({ mapTaskId, from, to, firstFailure }: CloseChunkInput): Promise<ChunkEnd> {
    const ids = Array.from({ length: to - from + 1 }, (_, offset) => itemTaskId(mapTaskId, from + offset));
    const items = await taskStore.findMany(ids);
    const slice = sliceOf(mapTaskId, from, to, items);
    await slices.save(slice);
    const stopper = firstFailure === undefined ? undefined : items.find((item) => item.itemIndex === firstFailure);
    return { counts: slice.counts, ...(stopper === undefined ? {} : { firstFailure: itemErrorOf(stopper) }) };
  };
}
