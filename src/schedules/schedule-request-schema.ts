/**
 * JSON Schemas of the schedule routes' requests, checked once at the edge (src/http/validate.ts), and
 * the types they admit. The action's task or composition is the body POST /tasks or POST
 * /tasks/compose takes, checked by the same schemas.
 */
import type { Schema } from 'ajv';
import { AFTER_PARAMETER, LIMIT_PARAMETER } from '../registry/registration-schema';
import { COMPOSITION_REQUEST_SCHEMA, TASK_REQUEST_SCHEMA } from '../tasks/task-request-schema';
import type { ScheduledAction } from '../../workflows/schedule-contract';

/** Shortest interval between two runs of an interval schedule. */
export const MIN_INTERVAL_MS = 1_000;
/** Longest interval: a year. */
export const MAX_INTERVAL_MS = 365 * 24 * 3_600_000;

export const Overlap = { SKIP: 'skip', BUFFER_ONE: 'bufferOne', ALLOW_ALL: 'allowAll' } as const;
export type Overlap = (typeof Overlap)[keyof typeof Overlap];

/** When a schedule runs: at the times of a cron expression in a time zone, or every `intervalMs`. */
export type ScheduleSpec = { cron: string; timezone: string } | { intervalMs: number };

/** A spec as a request gives it: the time zone is UTC unless named. */
export type ScheduleSpecBody = { cron: string; timezone?: string } | { intervalMs: number };

/** `POST /schedules`, with its defaults filled in. */
export interface ScheduleRequest {
  spec: ScheduleSpecBody;
  action: ScheduledAction;
  overlap: Overlap;
  paused: boolean;
}

/** `PATCH /schedules/{id}`: the members to change. */
export type ScheduleChange = Partial<ScheduleRequest>;

export interface ScheduleListQuery {
  limit?: string;
  after?: string;
}

const CRON_FIELD = '[0-9A-Za-z*/,-]+';

const CRON_SPEC_SCHEMA = {
  type: 'object',
  required: ['cron'],
  additionalProperties: false,
  properties: {
    cron: {
      type: 'string',
      maxLength: 200,
      pattern: `^${CRON_FIELD}(?: ${CRON_FIELD}){4}$`,
      description: 'must be five cron fields separated by one space: minute hour day-of-month month day-of-week',
    },
    timezone: {
      type: 'string',
      maxLength: 64,
      // The name is then looked up in the time zone database (schedule-spec.ts).
      pattern: '^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+){0,2}$',
      description: 'must be an IANA time zone name such as Europe/Oslo or UTC',
    },
  },
} as const;

const INTERVAL_SPEC_SCHEMA = {
  type: 'object',
  required: ['intervalMs'],
  additionalProperties: false,
  properties: { intervalMs: { type: 'integer', minimum: MIN_INTERVAL_MS, maximum: MAX_INTERVAL_MS } },
} as const;

const SPEC_SCHEMA = { oneOf: [CRON_SPEC_SCHEMA, INTERVAL_SPEC_SCHEMA] } as const;

const ACTION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  properties: { task: TASK_REQUEST_SCHEMA, composition: COMPOSITION_REQUEST_SCHEMA },
} as const;

const OVERLAP_SCHEMA = { enum: Object.values(Overlap) } as const;

/** `POST /schedules`. */
export const SCHEDULE_REQUEST_SCHEMA: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['spec', 'action'],
  properties: {
    spec: SPEC_SCHEMA,
    action: ACTION_SCHEMA,
    overlap: { ...OVERLAP_SCHEMA, default: Overlap.SKIP },
    paused: { type: 'boolean', default: false },
  },
};

/** `PATCH /schedules/{id}`: at least one member; those left out stay as they are. */
export const SCHEDULE_CHANGE_SCHEMA: Schema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { spec: SPEC_SCHEMA, action: ACTION_SCHEMA, overlap: OVERLAP_SCHEMA, paused: { type: 'boolean' } },
};

/** `GET /schedules?limit&after`. */
export const SCHEDULE_LIST_QUERY_SCHEMA: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: LIMIT_PARAMETER, after: AFTER_PARAMETER },
};
