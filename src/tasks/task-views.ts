import type { Principal } from '../auth/principal';
import {
  TaskStatus,
  type Requester,
  type SkipReason,
  type TaskError,
  type TaskPhase,
  type TaskResult,
} from '../../workflows/task-types';
import type { MapCounts } from '../../workflows/map-contract';
import { canReadTask } from './task-access';
import {
  inputRequestOf,
  type AttemptError,
  type InputRequest,
  type StoredComposition,
  type TaskDocument,
} from './task-document';

/** `GET /tasks/{taskId}` (docs/api.md, "Tasks"). */
export interface TaskView {
  taskId: string;
  status: TaskStatus;
  phase?: TaskPhase;
  result?: TaskResult;
  error?: TaskError;
  /** Why a skipped task did not run. */
  skipReason?: SkipReason;
  agentId: string;
  operation: string;
  compositionId?: string;
  /** Its parents in its composition: the tasks it waits for. */
  dependsOn?: string[];
  /** A map's item: its map task, and its element's index in the map's array. */
  mapTaskId?: string;
  itemIndex?: number;
  /** A map task: how many of its items ended each way, updated as its chunks end. */
  map?: MapCounts;
  parentTaskId?: string;
  rootTaskId?: string;
  hops?: number;
  roomId?: string;
  requestedBy?: Requester;
  attempts?: number;
  attemptErrors?: AttemptError[];
  progress?: number;
  message?: string;
  /** While `input-required`: what the agent asks for. */
  inputRequest?: InputRequest;
  createdAt: string;
  updatedAt: string;
}

export interface CompositionView {
  compositionId: string;
  status: TaskStatus;
  tasks: TaskView[];
  createdAt: string;
  updatedAt: string;
}

export function toTaskView(task: TaskDocument): TaskView {
  return {
    taskId: task._id,
    status: task.status,
    ...(task.phase === undefined ? {} : { phase: task.phase }),
    ...(task.result === undefined ? {} : { result: JSON.parse(task.result) as TaskResult }),
    ...(task.error === undefined ? {} : { error: JSON.parse(task.error) as TaskError }),
    ...(task.skipReason === undefined ? {} : { skipReason: JSON.parse(task.skipReason) as SkipReason }),
    agentId: task.agentId,
    operation: task.operation,
    ...(task.compositionId === undefined ? {} : { compositionId: task.compositionId }),
    ...(task.dependsOn === undefined ? {} : { dependsOn: task.dependsOn }),
    ...(task.mapTaskId === undefined ? {} : { mapTaskId: task.mapTaskId, itemIndex: task.itemIndex }),
    ...(task.map === undefined ? {} : { map: task.map }),
    ...(task.parentTaskId === undefined ? {} : { parentTaskId: task.parentTaskId }),
    ...(task.hops === undefined ? {} : { rootTaskId: task.rootTaskId, hops: task.hops }),
    ...(task.roomId === undefined ? {} : { roomId: task.roomId, requestedBy: task.requestedBy }),
    ...(task.attempts === undefined ? {} : { attempts: task.attempts }),
    ...(task.attemptErrors === undefined ? {} : { attemptErrors: task.attemptErrors }),
    ...(task.progress === undefined ? {} : { progress: task.progress }),
    ...(task.message === undefined ? {} : { message: task.message }),
    ...(task.inputRequest === undefined ? {} : { inputRequest: inputRequestOf(task) }),
    createdAt: task.createdAt.toISOString(),
    updatedAt: task.updatedAt.toISOString(),
  };
}

/**
 * A task of a composition as a reader who may not read that task sees it (the agent of a sibling
 * task): where it stands, without its result, error or progress.
 */
function toTaskOutline(task: TaskDocument): TaskView {
  return {
    taskId: task._id,
    status: task.status,
    ...(task.phase === undefined ? {} : { phase: task.phase }),
    agentId: task.agentId,
    operation: task.operation,
    ...(task.compositionId === undefined ? {} : { compositionId: task.compositionId }),
    ...(task.dependsOn === undefined ? {} : { dependsOn: task.dependsOn }),
    createdAt: task.createdAt.toISOString(),
    updatedAt: task.updatedAt.toISOString(),
  };
}

/**
 * pending while any task is; else completed when all completed; else failed (or cancelled when
 * nothing failed). The reader sees in full only the tasks it may read on their own.
 */
export function toCompositionView(
  { compositionId, createdAt, tasks }: StoredComposition,
  reader: Principal,
): CompositionView {
  const statuses = new Set(tasks.map((task) => task.status));
  const status =
    statuses.has(TaskStatus.PENDING) || statuses.has(TaskStatus.INPUT_REQUIRED)
      ? TaskStatus.PENDING
      : statuses.has(TaskStatus.FAILED)
        ? TaskStatus.FAILED
        : statuses.has(TaskStatus.CANCELLED)
          ? TaskStatus.CANCELLED
          : TaskStatus.COMPLETED;
  const updatedAt = new Date(Math.max(createdAt.getTime(), ...tasks.map((task) => task.updatedAt.getTime())));
  const viewOf = (task: TaskDocument) => (canReadTask(reader, task) ? toTaskView(task) : toTaskOutline(task));
  return {
    compositionId,
    status,
    tasks: tasks.map(viewOf),
    createdAt: createdAt.toISOString(),
    updatedAt: updatedAt.toISOString(),
  };
}
