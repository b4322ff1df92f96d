import type { WorkflowExecutionInfo } from '@temporalio/client';
import type { Logger } from '../ops/logger';
import { refOf, type TaskChange, type TaskDocument } from './task-document';
import type { TaskStore } from './task-store';
import type { TemporalHandle } from './temporal-client';
import {
  TaskErrorCode,
  TaskStatus,
  isLive,
  itemTaskId,
  workflowIdOfComposition,
  workflowIdOfMap,
  workflowIdOfTask,
} from '../../workflows/task-types';

/** Runs that closed without their workflow code ending their tasks: no code runs after a terminate. */
const ENDED_RUNS_QUERY =
  'WorkflowType IN ("compositionWorkflow", "mapWorkflow", "mapChunkWorkflow") AND ExecutionStatus IN ("Terminated", "Failed", "TimedOut")';
/**
 * Who terminated a run, as its termination event names it, when Temporal did so itself: a run over
 * its limits (history size, a workflow task completing with more than 4 MiB), not an operator's choice.
 */
const SERVER_IDENTITY = 'history-service';
/** Visibility lists a closed run a moment after it closed: each look goes this far back over the last. */
const VISIBILITY_LAG_MS = 60_000;

const TASK_RUN_PREFIX = workflowIdOfTask('');
const COMPOSITION_RUN_PREFIX = workflowIdOfComposition('');
const MAP_RUN_PREFIX = workflowIdOfMap('');
/** A map chunk's workflow id (workflowIdOfMapChunk), read back into its map task and its items. */
const MAP_CHUNK_RUN = /^map-(.+)-items-(\d+)-(\d+)$/;

export interface EndedRunsWatch {
  stop(): Promise<void>;
}

/**
 * An operator may terminate a task's workflow (in the Web UI or CLI), and a workflow may fail: its
 * tasks still pending would stay so in the task store for good. A worker process lists such runs every
 * `intervalMs` and ends their pending tasks itself: `cancelled` after an operator's terminate,
 * `failed` with WORKFLOW_ENDED otherwise. No callback or cancellation notice goes out for them.
 */
export function watchEndedRuns({
  temporal,
  taskStore,
  logger,
  intervalMs,
}: {
  temporal: TemporalHandle;
  taskStore: TaskStore;
  logger: Logger;
  intervalMs: number;
}): EndedRunsWatch {
  // The first look has no lower bound: runs that ended while no worker ran are found too.
  let since: Date | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  async function look(): Promise<void> {
    const lookedAt = Date.now();
    const query =
      since === undefined ? ENDED_RUNS_QUERY : `${ENDED_RUNS_QUERY} AND CloseTime >= "${since.toISOString()}"`;
    for await (const run of temporal.client.workflow.list({ query })) await endPendingTasks(run);
    since = new Date(lookedAt - VISIBILITY_LAG_MS);
  }

  async function endPendingTasks(run: WorkflowExecutionInfo): Promise<void> {
    const pending = (await tasksOfRun(taskStore, run.workflowId)).filter((task) => isLive(task.status));
    if (pending.length === 0 || (await replaced(run))) return;
    const change = await changeForEndOf(run);
    for (const task of pending) {
      if (await taskStore.updateIfNotEnded(refOf(task), change)) {
        logger.warn(
          { taskId: task._id, workflowId: run.workflowId, runStatus: run.status.name, status: change.status },
          'task ended with its closed workflow',
        );
      }
    }
  }

  /**
   * A Reset in the Web UI terminates the run it resets and starts another with the same workflow id,
   * which carries on with the tasks: the latest run of the id, when it is another, owns them.
   */
  async function replaced(run: WorkflowExecutionInfo): Promise<boolean> {
    const latest = await temporal.client.workflow.getHandle(run.workflowId).describe();
    return latest.runId !== run.runId;
  }

  /** Cancelled when an operator terminated the run; failed with WORKFLOW_ENDED when it failed, timed out or Temporal terminated it. */
  async function changeForEndOf(run: WorkflowExecutionInfo): Promise<TaskChange> {
    const ended = (how: string): TaskChange => ({
      status: TaskStatus.FAILED,
      error: {
        code: TaskErrorCode.WORKFLOW_ENDED,
        message: `The task's workflow ${run.workflowId} ${how} before the task ended`,
      },
    });
    if (run.status.name !== 'TERMINATED') return ended(`ended ${run.status.name}`);
    const { history } = await temporal.client.workflowService.getWorkflowExecutionHistoryReverse({
      namespace: temporal.client.options.namespace,
      execution: { workflowId: run.workflowId, runId: run.runId },
      maximumPageSize: 1,
    });
    const termination = history?.events?.[0]?.workflowExecutionTerminatedEventAttributes;
    return termination?.identity === SERVER_IDENTITY
      ? ended(`was terminated by Temporal (${termination.reason})`)
      : { status: TaskStatus.CANCELLED };
  }

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = look()
        .catch((error: unknown) => logger.warn({ err: error }, 'looking for ended task workflows failed; trying again'))
        .finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

async function tasksOfRun(taskStore: TaskStore, workflowId: string): Promise<TaskDocument[]> {
  // A map's chunk runs its items; the map's own workflow, only the map task (its chunks are runs of their own).
  const chunk = MAP_CHUNK_RUN.exec(workflowId);
  if (chunk) {
    const [, mapTaskId, from, to] = chunk;
    const indices = Array.from({ length: Number(to) - Number(from) + 1 }, (_, offset) => Number(from) + offset);
    return taskStore.findMany(indices.map((index) => itemTaskId(mapTaskId, index)));
  }
  if (workflowId.startsWith(MAP_RUN_PREFIX)) {
    const task = await taskStore.find(workflowId.slice(MAP_RUN_PREFIX.length));
    return task ? [task] : [];
  }
  if (workflowId.startsWith(TASK_RUN_PREFIX)) {
    const task = await taskStore.find(workflowId.slice(TASK_RUN_PREFIX.length));
    return task ? [task] : [];
  }
  if (workflowId.startsWith(COMPOSITION_RUN_PREFIX))
    return (await taskStore.findComposition(workflowId.slice(COMPOSITION_RUN_PREFIX.length)))?.tasks ?? [];
  return [];
}
