import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { Config } from '../config/config';
import type { Logger } from '../ops/logger';
import { createActivities, type ActivityDeps } from '../../activities';

let runtimeInstalled = false;

/**
 * Temporal's runtime is process-wide and must exist before the first worker. Its logs join ours;
 * it must not take SIGINT/SIGTERM, because the entry point shuts the whole process down in order.
 */
function installRuntime(logger: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const temporalLogger = logger.child({ sdk: 'temporal' });
  Runtime.install({
    shutdownSignals: [],
    logger: new DefaultLogger('WARN', ({ level, message, meta }) => {
      const method = level === 'ERROR' ? 'error' : level === 'WARN' ? 'warn' : 'debug';
      temporalLogger[method](meta ?? {}, message);
    }),
  });
}

export interface RunningWorker {
  stop(): Promise<void>;
}

type WorkerConfig = Pick<Config, 'temporalNamespace' | 'taskQueue'> & { temporalAddress: string };

/** Polls the task queue with the workflows in `workflows/` and the activities in `activities/`. */
export function startTaskWorker(config: WorkerConfig, deps: ActivityDeps): Promise<RunningWorker> {
  return startWorker(config, deps.logger, { activities: createActivities(deps), workflowsPath: require.resolve('../../workflows') });
}

/** A worker on `config.taskQueue`: activities only, unless given the workflows. */
export async function startWorker(config: WorkerConfig, logger: Logger, { activities, workflowsPath }: { activities: object; workflowsPath?: string }): Promise<RunningWorker> {
  installRuntime(logger);
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    ...(workflowsPath === undefined ? {} : { workflowsPath }),
    activities,
  });
  const running = worker.run();
  logger.info({ taskQueue: config.taskQueue }, 'worker polling');
  return {
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
