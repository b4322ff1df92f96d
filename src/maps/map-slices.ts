import type { IndexDescription } from 'mongodb';
import type { Store } from '../store/mongo';
import type { ChunkCounts } from '../../workflows/map-contract';
import { TaskStatus, type ItemError, type TaskError } from '../../workflows/task-types';
import type { TaskDocument } from '../tasks/task-document';

export const MAP_SLICES_COLLECTION = 'map_slices';

/**
 * One chunk's part of its map's result, written when the chunk ended: its items' results as JSON
 * text (each item's stored text, comma-joined without the brackets, `null` for an item that did not
 * complete), its failed and cancelled items as the JSON text of an ItemError array, and its counts.
 * The map's result is the slices joined in order, never parsed again.
 */
export interface SliceDocument {
  /** `{mapTaskId}:{from}`: read by `_id` only. */
  _id: string;
  mapTaskId: string;
  from: number;
  to: number;
  results: string;
  errors: string;
  counts: ChunkCounts;
}

export const sliceId = (mapTaskId: string, from: number): string => `${mapTaskId}:${from}`;

/** A failed or cancelled item as the map's result lists it. */
export function itemErrorOf(item: TaskDocument): ItemError {
  return {
    index: item.itemIndex!,
    taskId: item._id,
    status: item.status,
    ...(item.error === undefined ? {} : { error: JSON.parse(item.error) as TaskError }),
  };
}

/** The slice of the chunk's items `from` to `to`, from their records (in any order). */
export function sliceOf(mapTaskId: string, from: number, to: number, items: TaskDocument[]): SliceDocument {
  const byIndex = new Map(items.map((item) => [item.itemIndex!, item]));
  const results: string[] = [];
  const errors: ItemError[] = [];
  const counts: ChunkCounts = { completed: 0, failed: 0, cancelled: 0 };
  for (let index = from; index <= to; index += 1) {
    const item = byIndex.get(index);
    if (item?.status === TaskStatus.COMPLETED && item.result !== undefined) {
      results.push(item.result);
      counts.completed += 1;
      continue;
    }
    results.push('null');
    if (item?.status === TaskStatus.FAILED || item?.status === TaskStatus.CANCELLED) {
      errors.push(itemErrorOf(item));
      counts[item.status] += 1;
    }
  }
  return {
    _id: sliceId(mapTaskId, from),
    mapTaskId,
    from,
    to,
    results: results.join(','),
    errors: JSON.stringify(errors),
    counts,
  };
}

/** The slices of maps' results, each written once by its chunk's closing activity (again when retried). */
export class MapSlices {
  constructor(private readonly store: Store) {}

  /** None: every read is by `_id`. */
  static indexes(): IndexDescription[] {
    return [];
  }

  private get slices() {
    return this.store.collection<SliceDocument>(MAP_SLICES_COLLECTION);
  }

  async save(slice: SliceDocument): Promise<void> {
    await this.slices.replaceOne({ _id: slice._id }, slice, { upsert: true });
  }

  /** The map's slices starting at `starts`, in element order. */
  async read(mapTaskId: string, starts: number[]): Promise<SliceDocument[]> {
    const slices = await this.slices.find({ _id: { $in: starts.map((from) => sliceId(mapTaskId, from)) } }).toArray();
    return slices.sort((a, b) => a.from - b.from);
  }
}
