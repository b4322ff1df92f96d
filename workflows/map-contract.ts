// The map's workflows (map-workflow.ts, map-chunk-workflow.ts): their inputs, results and the
// activities they call. Inputs and results are in the histories of running maps: a change here
// changes what they send and read, so guard it with patched() (versions.ts).
import type { ItemError, ItemFailurePolicy, PlannedTask, TaskError, TaskOutcome } from './task-types';

/** How many of a map's items ended each way; `total` is the array's length. */
export interface MapCounts {
  total: number;
  completed: number;
  failed: number;
  cancelled: number;
}

/** How many items of one chunk ended each way. */
export type ChunkCounts = Omit<MapCounts, 'total'>;

/** The map task as its workflow runs it: its params with the ordinary pending arguments filled in. */
export interface MapWorkflowInput {
  task: PlannedTask & { forEach: NonNullable<PlannedTask['forEach']> };
  /** The task whose result holds the array (the parent forEach names). */
  sourceTaskId: string;
  /** The composition whose event log the map task's events go to. */
  compositionId?: string;
  agentCallTimeoutMs: number;
  /** A dependant reads the map's result: it comes back in the outcome. */
  keepsResult: boolean;
}

/** The map task's child workflow (map-workflow.ts), started by name: its module imports the task's run. */
export type MapWorkflow = (input: MapWorkflowInput) => Promise<TaskOutcome>;
export const MAP_WORKFLOW = 'mapWorkflow';

/** One chunk of a map: its items `from` to `to`, at most `share` of them running at once. */
export interface MapChunkInput {
  mapTaskId: string;
  /** The map task's plan; each item's params are its params with the item arguments filled in. */
  task: PlannedTask;
  sourceTaskId: string;
  field: string;
  from: number;
  to: number;
  share: number;
  onItemFailure: ItemFailurePolicy;
  agentCallTimeoutMs: number;
}

/** What a chunk tells its map: its counts, and under `fail` the item that ended it. */
export interface ChunkEnd {
  counts: ChunkCounts;
  firstFailure?: ItemError;
}

/** A chunk's child workflow (map-chunk-workflow.ts), started by name as the map's is. */
export type MapChunkWorkflow = (input: MapChunkInput) => Promise<ChunkEnd>;
export const MAP_CHUNK_WORKFLOW = 'mapChunkWorkflow';

export interface OpenMapInput {
  mapTaskId: string;
  compositionId?: string;
  sourceTaskId: string;
  field: string;
}

/** The array's length, and how many items one chunk may hold (history-budget.ts, read by the activity). */
export interface OpenedMap {
  total: number;
  maxItemsPerChunk: number;
}

export interface MapProgress {
  mapTaskId: string;
  compositionId?: string;
  counts: MapCounts;
}

/** How the map ended: its chunks' slices joined, its first failed item, or cancelled. */
export type MapEnd =
  | { kind: 'completed'; chunkStarts: number[]; onItemFailure: ItemFailurePolicy }
  | { kind: 'failed'; error: TaskError }
  | { kind: 'cancelled' };

export interface CloseMapInput extends MapProgress {
  end: MapEnd;
  keepsResult: boolean;
}

export interface OpenChunkInput {
  mapTaskId: string;
  sourceTaskId: string;
  field: string;
  from: number;
  to: number;
  agentId: string;
  operation: string;
  /** The map's params, item arguments in place. */
  params: Record<string, unknown>;
  /** The chunk's workflow, which its items' records name. */
  workflowId: string;
}

/** The items whose params failed their substitution or the inputSchema: recorded failed, never called. */
export interface OpenedChunk {
  invalid: number[];
}

export interface CloseChunkInput {
  mapTaskId: string;
  from: number;
  to: number;
  /** The item whose end stopped the chunk (onItemFailure `fail`). */
  firstFailure?: number;
}

/** The activities of a map's workflows, registered by the task worker (activities/index.ts). */
export interface MapActivities {
  /** Reads and checks the array, and records its length on the map task; fails TYPE_MISMATCH, MISSING_FIELD or MAP_TOO_LARGE. */
  openMap: (input: OpenMapInput) => Promise<OpenedMap>;
  /** The map's counts and progress on its task, once per chunk. */
  recordMapProgress: (progress: MapProgress) => Promise<void>;
  /** Records the map task's outcome; returns it, the result only when `keepsResult`. */
  closeMap: (input: CloseMapInput) => Promise<TaskOutcome>;
  /** Creates the chunk's item records in one write, checking each item's params. */
  openChunk: (input: OpenChunkInput) => Promise<OpenedChunk>;
  /** Records the items that never started cancelled, in one write. */
  endQueued: (taskIds: string[]) => Promise<void>;
  /** Joins the chunk's results into its slice of the map's result. */
  closeChunk: (input: CloseChunkInput) => Promise<ChunkEnd>;
}
