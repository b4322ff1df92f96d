import type { Principal } from '../auth/principal';
import type { LoggedEvent, TaskRef } from '../task-events/task-event';
import {
  isLive,
  type Requester,
  type SkipReason,
  type TaskError,
  type TaskPhase,
  type TaskResult,
  type TaskStatus,
} from '../../workflows/task-types';
import type { MapCounts } from '../../workflows/map-contract';

export const TASKS_COLLECTION = 'tasks';
export const COMPOSITIONS_COLLECTION = 'compositions';

/**
 * A task as MongoDB keeps it for lookups. params, result and error are JSON text: they are the
 * callers' and agents' data, whose keys may contain '.' or start with '$', which a store may refuse as field names
 * (src/store/mongo.ts).
 */
export interface TaskDocument {
  _id: string;
  compositionId?: string;
  /** The task's position in its composition's request (the stored field's name stays `index`). */
  index?: number;
  /** The ids of its parents in its composition, which it waits for; absent without parents (and on tasks stored before they were kept). */
  dependsOn?: string[];
  /**
   * The task this one was started on behalf of (TaskOrigin, TaskLineage): cancelling that one cancels
   * this one. Set only for a parent of this store that the creator could name (task-lineage.ts).
   */
  parentTaskId?: string;
  /** The top of the tree of tasks started on behalf of others that this one belongs to; absent on a root. */
  rootTaskId?: string;
  /** How many tasks lie between this one and its root; absent on a root (0). */
  hops?: number;
  /** The room the task was requested in, and by whom (TaskOrigin). */
  roomId?: string;
  requestedBy?: Requester;
  /** Where the completion callback goes. */
  callbackUrl?: string;
  /**
   * The A2A context a client sent the task's message in (src/a2a/a2a-context.ts); absent, the task
   * is alone in the context its own id names.
   */
  contextId?: string;
  /** A map's item: the map task it belongs to, and its element's index in the map's array. */
  mapTaskId?: string;
  itemIndex?: number;
  /** The workflow that runs the task, when its id does not tell (a map's item: its chunk's). */
  workflowId?: string;
  /** A map task: how many of its items ended each way, updated once per chunk. */
  map?: MapCounts;
  agentId: string;
  operation: string;
  params: string;
  status: TaskStatus;
  phase?: TaskPhase;
  result?: string;
  error?: string;
  /** A skipped task's SkipReason, as JSON text. */
  skipReason?: string;
  attempts?: number;
  /** Calls to the agent started so far, by any worker (TaskStore.startCall). */
  callsStarted?: number;
  /** Why each failed call to the agent failed, in order. */
  attemptErrors?: AttemptError[];
  /** The agent's last progress report. */
  progress?: number;
  message?: string;
  /** While `input-required`: what the agent asks for, as JSON text of an InputRequest. */
  inputRequest?: string;
  /** How many times the agent asked for input. */
  inputRequests?: number;
  /** The last seq handed out in the task's own event log (a task outside any composition). */
  eventSeq?: number;
  /** The seq of the event that ended the task, in its composition's log. */
  endSeq?: number;
  /** When the agent took the task to report on later (its 202, or the start of its MCP task): the report's wait is measured from it. */
  acceptedAt?: Date;
  /** When the agent last asked for input: the answer's wait is measured from it. */
  inputRequestedAt?: Date;
  createdBy: Principal;
  createdAt: Date;
  updatedAt: Date;
}

/** One failed call to the agent, as `GET /tasks/{taskId}` shows it. */
export interface AttemptError {
  attempt: number;
  code: string;
  message: string;
  /** ISO time of the failure. */
  at: string;
}

/** What an agent asks a person for (docs/api.md, "Input required"). */
export interface InputRequest {
  requestId: string;
  message: string;
  inputSchema?: Record<string, unknown>;
  /** A page the person is asked to open (an MCP URL-mode elicitation); the input confirms it. */
  url?: string;
}

/** A task to create (TaskStore.create), as the launcher checked it. */
export type NewTask = Pick<
  TaskDocument,
  | '_id'
  | 'agentId'
  | 'operation'
  | 'compositionId'
  | 'index'
  | 'dependsOn'
  | 'parentTaskId'
  | 'rootTaskId'
  | 'hops'
  | 'callbackUrl'
  | 'contextId'
  | 'roomId'
  | 'requestedBy'
> & { params: Record<string, unknown>; phase: TaskPhase };

/**
 * A status change recorded by the workflow's activities or the API. A change to an ending status is
 * the task's ending event; any other event it is goes in `event`.
 */
export interface TaskChange {
  status?: TaskStatus;
  phase?: TaskPhase;
  result?: TaskResult;
  error?: TaskError;
  skipReason?: SkipReason;
  attempts?: number;
  /** Appended to the task's attemptErrors. */
  attemptError?: AttemptError;
  progress?: number;
  message?: string;
  /** Set with the input-required status; removed by any other status. */
  inputRequest?: InputRequest;
  /** A map's result as JSON text, joined from its slices without parsing them (in place of `result`). */
  resultText?: string;
  /** A map task's counts. */
  map?: MapCounts;
  event?: LoggedEvent;
}

/** The input request the task waits on, stored as JSON text with the input-required status. */
export const inputRequestOf = (task: Pick<TaskDocument, 'inputRequest'>): InputRequest | undefined =>
  task.inputRequest === undefined ? undefined : (JSON.parse(task.inputRequest) as InputRequest);

/** A map's item to create (TaskStore.createItems): its params as checked, its status pending, or failed when they failed their check. */
export type NewItem = Pick<
  TaskDocument,
  '_id' | 'agentId' | 'operation' | 'mapTaskId' | 'itemIndex' | 'workflowId' | 'createdBy'
> & { params: Record<string, unknown>; error?: TaskError };

/** Whether the change ends the task. */
export const endsTask = (change: TaskChange): boolean => change.status !== undefined && !isLive(change.status);

export interface CompositionDocument {
  _id: string;
  taskIds: string[];
  /** The last seq handed out in the composition's event log; its tasks' created events hold the first ones. */
  eventSeq?: number;
  createdBy: Principal;
  createdAt: Date;
}

/** A composition with its tasks, in order, as `GET /compositions/{compositionId}` reads it. */
export interface StoredComposition {
  compositionId: string;
  createdBy: Principal;
  createdAt: Date;
  tasks: TaskDocument[];
}

/** The log a stored task's events go to. */
export const refOf = (task: Pick<TaskDocument, '_id' | 'compositionId'>): TaskRef => ({
  taskId: task._id,
  ...(task.compositionId === undefined ? {} : { compositionId: task.compositionId }),
});
