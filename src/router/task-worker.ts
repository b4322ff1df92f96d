import { Worker, type NativeConnection } from '@temporalio/worker';
import type { Config } from '../config/config';
import type { Logger } from '../ops/logger';
import { createActivities, type ActivityDeps } from '../../activities';

export interface RunningWorker {
  stop(): Promise<void>;
}

type WorkerConfig = Pick<Config, 'temporalNamespace' | 'taskQueue'>;

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
    // A call attempt hears of its cancellation in a heartbeat's answer: send them every second.
    maxHeartbeatThrottleInterval: '1 second',
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
