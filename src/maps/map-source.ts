import { fieldOf } from '../../workflows/pending-arguments';
import { TaskErrorCode, TaskStatus, type ServiceTaskError } from '../../workflows/task-types';
import type { TaskDocument } from '../tasks/task-document';
import type { TaskStore } from '../tasks/task-store';

/** The array a map runs over could not be read: MISSING_FIELD or TYPE_MISMATCH, the map's error. */
export class MapSourceError extends Error {
  constructor(readonly error: ServiceTaskError) {
    super(error.message);
  }
}

/** Parsed arrays kept by a worker: the 40 chunks of a map of 10 000 items parse its array once. */
const KEPT_ARRAYS = 4;

/**
 * The arrays maps run over, read from their source task's result (JSON text in the task store),
 * kept parsed by source task and its `updatedAt`: a newer write of that task is read anew.
 */
export class MapSources {
  private readonly kept = new Map<string, unknown[]>();

  constructor(private readonly taskStore: Pick<TaskStore, 'find' | 'findUpdatedAt'>) {}

  /** The array at `field` of the result of task `sourceTaskId`; throws MapSourceError. */
  async read(sourceTaskId: string, field: string): Promise<unknown[]> {
    const updatedAt = await this.taskStore.findUpdatedAt(sourceTaskId);
    const key = `${sourceTaskId}@${updatedAt?.getTime() ?? 0}@${field}`;
    const kept = this.kept.get(key);
    if (kept !== undefined) {
      // The last read is kept longest.
      this.kept.delete(key);
      this.kept.set(key, kept);
      return kept;
    }
    const elements = arrayOf(await this.taskStore.find(sourceTaskId), sourceTaskId, field);
    this.kept.set(key, elements);
    if (this.kept.size > KEPT_ARRAYS) this.kept.delete(this.kept.keys().next().value!);
    return elements;
  }
}

function arrayOf(task: TaskDocument | null, taskId: string, field: string): unknown[] {
  // A source that did not complete (executeOnParentFailure, runIfParentSkipped) gives null, as it
  // does to pending arguments: no array.
  const found =
    task?.status === TaskStatus.COMPLETED && task.result !== undefined
      ? fieldOf(JSON.parse(task.result) as Record<string, unknown>, field, true)
      : { value: null };
  if (found === undefined) {
    throw new MapSourceError({
      code: TaskErrorCode.MISSING_FIELD,
      message: `forEach reads field "${field}" of task ${taskId}, whose result has no such field`,
    });
  }
  if (!Array.isArray(found.value)) {
    const actual = found.value === null ? 'null' : typeof found.value;
    throw new MapSourceError({
      code: TaskErrorCode.TYPE_MISMATCH,
      message: `forEach reads field "${field}" of task ${taskId}, which is not an array`,
      details: { expected: 'array', actual },
    });
  }
  return found.value;
}
