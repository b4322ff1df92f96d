import { Context } from '@temporalio/activity';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import type { TemporalHandle } from '../src/tasks/temporal-client';
import { heartbeating } from './heartbeats';

/** How often the wait heartbeats: the run's heartbeat timeout (workflows/scheduled-run.ts) is 30 s. */
const HEARTBEAT_MS = 5_000;

/**
 * Waits for the workflow a scheduled run launched to close, however it ends (completed, failed,
 * cancelled, terminated), so that the schedule's next run sees the work as running until then.
 */
export function awaitLaunchedWorkActivity(temporal: Pick<TemporalHandle, 'client'>) {
  // A cancelled run stops waiting: the heartbeats tell the activity.
  return heartbeating(async function awaitLaunchedWork(workflowId: string): Promise<void> {
    const ended = temporal.client.workflow
      .getHandle(workflowId)
      .result()
      .then(
        () => undefined,
        (error: unknown) => {
          if (error instanceof WorkflowFailedError || error instanceof WorkflowNotFoundError) return;
          throw error;
        },
      );
    await Promise.race([ended, Context.current().cancelled]);
  }, HEARTBEAT_MS);
}
