import { Worker, type NativeConnection } from '@temporalio/worker';
import type { Config } from '../config/config';
import type { Logger } from '../ops/logger';
import { createActivities, type ActivityDeps } from '../../activities';

export interface RunningWorker {
  stop(): Promise<void>;
}

type WorkerConfig = Pick<Config, 'temporalNamespace' | 'taskQueue'>;

/**
 * Workflow task slots of a worker. An eager start hands the new workflow's first task to this
 * worker only while a slot is free; with the default 40, a busy worker has none, the start falls back
 * to the task queue, and new workflows wait there behind the rest (bench/tasks at 50 concurrent
 * tasks: p99 8 to 9 s; with 200 slots 2 s, and a third more throughput). A slot only holds a task:
 * the workflow thread still runs one activation at a time. An agent call holds its workflow task
 * (a local activity), so there are as many as there are call slots.
 */
export const WORKFLOW_TASK_SLOTS = 1000;

/**
 * Local activity slots: agent calls in flight, and the bookkeeping. A call mostly waits on the
 * network. With 100 (the default) and 200 workflow task slots, 250 calls to an agent answering in
 * 8 s took 28 s, in three rounds, and a quick task sent among them 17 s; with 1000 of each, 19 s and
 * 3 s (bound by the CPU of 2 cores).
 */
const LOCAL_ACTIVITY_SLOTS = WORKFLOW_TASK_SLOTS;

/** Polls the task queue with the workflows in `workflows/` and the activities in `activities/`. */
export function startTaskWorker(config: WorkerConfig, connection: NativeConnection, deps: ActivityDeps): Promise<RunningWorker> {
  return startWorker(config, connection, deps.logger, { activities: createActivities(deps), workflowsPath: require.resolve('../../workflows') });
}

/** A worker on `config.taskQueue` over the process's connection (TemporalHandle): activities only, unless given the workflows. */
export async function startWorker(config: WorkerConfig, connection: NativeConnection, logger: Logger, { activities, workflowsPath }: { activities: object; workflowsPath?: string }): Promise<RunningWorker> {
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    ...(workflowsPath === undefined ? {} : { workflowsPath }),
    activities,
    maxConcurrentWorkflowTaskExecutions: WORKFLOW_TASK_SLOTS,
    maxConcurrentLocalActivityExecutions: LOCAL_ACTIVITY_SLOTS,
  });
  const running = worker.run();
  logger.info({ taskQueue: config.taskQueue }, 'worker polling');
  return {
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}
