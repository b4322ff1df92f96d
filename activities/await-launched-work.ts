import { Context } from '@temporalio/activity';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import type { TemporalHandle } from '../src/tasks/temporal-client';

/** How often the wait heartbeats: the run's heartbeat timeout (workflows/scheduled-run.ts) is 30 s. */
const HEARTBEAT_MS = 5_000;

/**
 * Waits for the workflow a scheduled run launched to close, however it ends (completed, failed,
 * cancelled, terminated), so that the schedule's next run sees the work as running until then.
 */
export function awaitLaunchedWorkActivity(temporal: Pick<TemporalHandle, 'client'>) {
  return async function awaitLaunchedWork(workflowId: string): Promise<void> {
    const context = Context.current();
    const heartbeats = setInterval(() => context.heartbeat(), HEARTBEAT_MS);
    try {
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
      // A cancelled run stops waiting: the heartbeat tells the activity.
      await Promise.race([ended, context.cancelled]);
    } finally {
      clearInterval(heartbeats);
    }
  };
}
