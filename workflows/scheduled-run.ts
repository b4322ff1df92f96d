// One run of a schedule: launches its task or composition, then waits for that work to end, so
// that the schedule's overlap policy is about the work, not about its launch.
import { ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import {
  SCHEDULED_RUN_REFUSED,
  type ScheduleActivities,
  type ScheduledRunInput,
  type ScheduledRunResult,
} from './schedule-contract';

/** The launch checks and writes like a request to the API: retried until MongoDB and Temporal answer again. */
const launches = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * The wait heartbeats (activities/await-launched-work.ts): a worker that died while waiting is noticed
 * within the heartbeat timeout and the wait goes on elsewhere. Each attempt ends after an hour and
 * the next one waits on, so that a wait of any length costs the run's history nothing (retries are
 * not recorded).
 */
const waits = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

export async function scheduledRunWorkflow(input: ScheduledRunInput): Promise<ScheduledRunResult> {
  const launched = await launches.launchScheduledRun({ ...input, runId: workflowInfo().workflowId });
  if ('error' in launched) {
    // The run fails where operators look (the schedule's recent runs in the Web UI); the schedule goes on.
    throw ApplicationFailure.create({
      type: SCHEDULED_RUN_REFUSED,
      message: `${launched.error.code}: ${launched.error.message}`,
      nonRetryable: true,
    });
  }
  await waits.awaitLaunchedWork(launched.workflowId);
  return launched;
}
