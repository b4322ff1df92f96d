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

/** Polls the task queue with the workflows in `workflows/` and the activities in `activities/`. */
export async function startTaskWorker(
  config: Pick<Config, 'temporalNamespace' | 'taskQueue'> & { temporalAddress: string },
  deps: ActivityDeps,
): Promise<RunningWorker> {
  installRuntime(deps.logger);
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    workflowsPath: require.resolve('../../workflows'),
    activities: createActivities(deps),
  });
  const running = worker.run();
  deps.logger.info({ taskQueue: config.taskQueue }, 'worker polling');
  return {
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
