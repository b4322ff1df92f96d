import { Context } from '@temporalio/activity';
import type { ApiKeyStore } from '../src/auth/api-keys';
import type { Principal } from '../src/auth/principal';
import { ApiError } from '../src/http/errors';
import type { RecentAgents } from '../src/registry/recent-agents';
import { requireCreatorActive } from '../src/schedules/schedule-owner';
import type { ScheduleRun, ScheduleStore } from '../src/schedules/schedule-store';
import type { IdempotencyKeys } from '../src/tasks/idempotency-keys';
import type { TaskLauncher } from '../src/tasks/task-launcher';
import type { LaunchedRun, ScheduledRunLaunch } from '../workflows/schedule-contract';
import { workflowIdOfComposition, workflowIdOfTask } from '../workflows/task-types';

/**
 * Launches a run's action as the API launches a request, as the schedule's owner. The run's workflow
 * id is the launch's idempotency key, so a retried activity (a worker that died after the launch)
 * answers the first launch's ids and starts nothing again. An action the checks now refuse (its agent
 * was deleted, its params no longer fit the tool), or a creator who can no longer act (a revoked
 * key), launches nothing and is recorded as the run's error; any other failure is retried.
 */
export function launchScheduledRunActivity(
  launcher: TaskLauncher,
  idempotencyKeys: IdempotencyKeys,
  schedules: ScheduleStore,
  creators: { apiKeys: Pick<ApiKeyStore, 'find'>; agents: Pick<RecentAgents, 'findById'> },
) {
  return async function launchScheduledRun({
    scheduleId,
    owner,
    action,
    runId,
  }: ScheduledRunLaunch): Promise<LaunchedRun> {
    const context = Context.current();
    const principal: Principal = owner;
    const recorded = await schedules.findRun(runId);
    // A retry of an activity that recorded its run (and died before Temporal heard): the launch stands.
    if (recorded) return launchedOf(recorded);
    const idempotency = idempotencyKeys.forRequest(principal, runId, 'scheduled-run', action);
    let launched: LaunchedRun;
    try {
      await requireCreatorActive(principal, creators);
      if ('task' in action) {
        const taskId = await launcher.launchTask(principal, action.task, { idempotency });
        launched = { taskId, workflowId: workflowIdOfTask(taskId) };
      } else {
        const { compositionId, taskIds } = await launcher.launchComposition(principal, action.composition, idempotency);
        launched = { compositionId, taskIds, workflowId: workflowIdOfComposition(compositionId) };
      }
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      launched = { error: { code: error.code, message: error.message } };
      context.log.warn('Scheduled run refused: its action no longer passes the checks', {
        scheduleId,
        runId,
        code: error.code,
        message: error.message,
      });
    }
    await schedules.recordRun({ runId, scheduleId, at: new Date(), ...launched });
    // The run's record answers a retry from now on: the claim would only keep a document per run.
    await idempotency?.release().catch(() => undefined);
    if (!('error' in launched)) context.log.info('Scheduled run launched', { scheduleId, runId, ...launched });
    return launched;
  };
}

/** What a recorded run launched, as the activity answered it the first time. */
function launchedOf({ runId: _runId, scheduleId: _scheduleId, at: _at, ...launched }: ScheduleRun): LaunchedRun {
  return launched;
}
