import { isAdmin, samePrincipal, type Principal } from '../auth/principal';
import { notFound } from '../http/errors';
import type { Schedule } from './schedule-store';

/**
 * `schedule` when `principal` created it or is an admin; else 404, as for an unknown id: as a task
 * answers those who may not read it.
 */
export function readableSchedule(principal: Principal, schedule: Schedule | null, scheduleId: string): Schedule {
  if (!schedule || !(isAdmin(principal) || samePrincipal(principal, schedule.createdBy)))
    throw notFound(`Schedule ${scheduleId}`);
  return schedule;
}
