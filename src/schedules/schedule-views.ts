import { principalRef } from '../auth/principal';
import type { Schedule, ScheduleRun } from './schedule-store';

/** A run as GET /schedules/{id} shows it. */
export function toRunView({ runId, at, scheduleId: _scheduleId, ...outcome }: ScheduleRun) {
  if ('error' in outcome) return { runId, at: at.toISOString(), error: outcome.error };
  if ('compositionId' in outcome)
    return { runId, at: at.toISOString(), compositionId: outcome.compositionId, taskIds: outcome.taskIds };
  return { runId, at: at.toISOString(), taskId: outcome.taskId };
}

/** A schedule as lists show it; GET /schedules/{id} adds its next and recent runs. */
export function toScheduleView(schedule: Schedule) {
  return {
    scheduleId: schedule.scheduleId,
    spec: schedule.spec,
    action: schedule.action,
    overlap: schedule.overlap,
    paused: schedule.paused,
    createdBy: principalRef(schedule.createdBy),
    createdAt: schedule.createdAt.toISOString(),
    updatedAt: schedule.updatedAt.toISOString(),
  };
}
