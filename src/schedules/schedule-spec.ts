import type { ScheduleOverlapPolicy, ScheduleSpec as TemporalScheduleSpec } from '@temporalio/client';
import { invalid } from '../http/errors';
import type { Overlap, ScheduleSpec, ScheduleSpecBody } from './schedule-request-schema';

/** Temporal's overlap policy of each of ours: what happens when a run is due while the last one's work still runs. */
export const OVERLAP_POLICY: Record<Overlap, ScheduleOverlapPolicy> = {
  skip: 'SKIP',
  bufferOne: 'BUFFER_ONE',
  allowAll: 'ALLOW_ALL',
};

/**
 * How late a run that fell due while Temporal was down still starts once it is back. A day keeps the
 * 07:00 run of a night's outage; the overlap policy bounds how many of the missed runs start.
 */
export const CATCHUP_WINDOW = '1 day';

/** The schedule's times as Temporal takes them. */
export function temporalSpecOf(spec: ScheduleSpec): TemporalScheduleSpec {
  return 'cron' in spec
    ? { cronExpressions: [spec.cron], timezone: spec.timezone }
    : { intervals: [{ every: spec.intervalMs }] };
}

/** The time zone of a cron spec that names none. */
export const DEFAULT_TIMEZONE = 'UTC';

/**
 * The spec with its time zone, which must be a zone of the time zone database (the schema checked
 * the name's form); 400 otherwise.
 */
export function checkedSpec(spec: ScheduleSpecBody): ScheduleSpec {
  if (!('cron' in spec)) return spec;
  const timezone = spec.timezone ?? DEFAULT_TIMEZONE;
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw invalid(`Invalid schedule: /spec/timezone "${timezone}" is no IANA time zone`, [
      { path: '/spec/timezone', message: 'is no IANA time zone' },
    ]);
  }
  return { cron: spec.cron, timezone };
}

/** A spec as the schedule's summary names it: "cron 0 7 * * * (Europe/Oslo)", "every 5000 ms". */
export function describeSpec(spec: ScheduleSpec): string {
  return 'cron' in spec ? `cron ${spec.cron} (${spec.timezone})` : `every ${spec.intervalMs} ms`;
}
