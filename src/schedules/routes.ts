import { requirePrincipal } from '../auth/principal';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { validator } from '../http/validate';
import {
  SCHEDULE_CHANGE_SCHEMA,
  SCHEDULE_LIST_QUERY_SCHEMA,
  SCHEDULE_REQUEST_SCHEMA,
  type ScheduleChange,
  type ScheduleListQuery,
  type ScheduleRequest,
} from './schedule-request-schema';
import { toRunView, toScheduleView } from './schedule-views';
import type { DescribedSchedule, Schedules } from './schedules';

const checkRequest = validator<ScheduleRequest>(SCHEDULE_REQUEST_SCHEMA, 'schedule');
const checkChange = validator<ScheduleChange>(SCHEDULE_CHANGE_SCHEMA, 'schedule change');
const checkListQuery = validator<ScheduleListQuery>(SCHEDULE_LIST_QUERY_SCHEMA, 'query string');

const DEFAULT_PAGE_SIZE = 50;

const ACTION_ERRORS = {
  '400':
    'VALIDATION_ERROR, OPERATION_NOT_SUPPORTED or INVALID_COMPOSITION: the spec, or the action as POST /tasks or POST /tasks/compose would refuse it',
  '404': 'AGENT_NOT_FOUND: an agent of the action that its creator cannot see',
  '413': 'PAYLOAD_TOO_LARGE: a composition over MAX_COMPOSITION_SIZE',
};

export const SCHEDULE_ROUTES = routeTable({
  versioned: true,
  operations: {
    'POST /schedules': {
      summary:
        'Create a schedule: a task or composition started at the times of a cron spec or every intervalMs, as its creator; the action is checked now and at each run',
      credential: 'any',
      body: SCHEDULE_REQUEST_SCHEMA,
      success: [201, 'The schedule, with scheduleId, and Location'],
      errors: { ...ACTION_ERRORS, '409': 'CONFLICT: the caller has MAX_SCHEDULES_PER_CREATOR schedules already' },
    },
    'GET /schedules': {
      summary: "The caller's schedules (an admin's: everyone's), paged by limit and after",
      credential: 'any',
      query: SCHEDULE_LIST_QUERY_SCHEMA,
      success: [200, 'Array of schedules'],
    },
    'GET /schedules/:scheduleId': {
      summary: 'A schedule with its nextRuns and recentRuns (creator or admin)',
      credential: 'any',
      success: [200, 'The schedule with nextRuns and recentRuns'],
    },
    'PATCH /schedules/:scheduleId': {
      summary: 'Change the spec, action, overlap or paused of a schedule (creator or admin); checked as at creation',
      credential: 'any',
      body: SCHEDULE_CHANGE_SCHEMA,
      success: [200, 'The schedule'],
      errors: ACTION_ERRORS,
    },
    'POST /schedules/:scheduleId/pause': {
      summary: 'Pause a schedule: no run starts until it is unpaused (creator or admin)',
      credential: 'any',
      success: [200, 'The schedule'],
    },
    'POST /schedules/:scheduleId/unpause': {
      summary: 'Unpause a schedule (creator or admin)',
      credential: 'any',
      success: [200, 'The schedule'],
    },
    'POST /schedules/:scheduleId/trigger': {
      summary: 'Start a run now, whatever the overlap policy, paused or not (creator or admin)',
      credential: 'any',
      success: [202, '{scheduleId}; the run shows in recentRuns once launched'],
    },
    'DELETE /schedules/:scheduleId': {
      summary: 'Delete a schedule: no run starts after this; runs already started go on (creator or admin)',
      credential: 'any',
      success: [204, 'Deleted'],
    },
  },
});

function toDescribedView({ schedule, nextRuns, recentRuns }: DescribedSchedule) {
  return {
    ...toScheduleView(schedule),
    nextRuns: nextRuns.map((time) => time.toISOString()),
    recentRuns: recentRuns.map(toRunView),
  };
}

/** /schedules: schedules of tasks and compositions. Served bare and under /v1. */
export function createScheduleRoutes(schedules: Schedules): RouteModule {
  const router = new DocumentedRouter(SCHEDULE_ROUTES);

  router.serve('POST /schedules', async (ctx) => {
    const schedule = await schedules.create(requirePrincipal(ctx), checkRequest(ctx.request.body));
    ctx.status = 201;
    ctx.set('Location', `/schedules/${schedule.scheduleId}`);
    ctx.body = toScheduleView(schedule);
  });

  router.serve('GET /schedules', async (ctx) => {
    const query = checkListQuery(ctx.query);
    const page = { limit: query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit), after: query.after };
    ctx.body = (await schedules.list(requirePrincipal(ctx), page)).map(toScheduleView);
  });

  router.serve('GET /schedules/:scheduleId', async (ctx) => {
    ctx.body = toDescribedView(await schedules.describe(requirePrincipal(ctx), ctx.params.scheduleId));
  });

  router.serve('PATCH /schedules/:scheduleId', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const change = checkChange(ctx.request.body);
    ctx.body = toScheduleView(await schedules.update(principal, ctx.params.scheduleId, change));
  });

  router.serve('POST /schedules/:scheduleId/pause', async (ctx) => {
    ctx.body = toScheduleView(await schedules.setPaused(requirePrincipal(ctx), ctx.params.scheduleId, true));
  });

  router.serve('POST /schedules/:scheduleId/unpause', async (ctx) => {
    ctx.body = toScheduleView(await schedules.setPaused(requirePrincipal(ctx), ctx.params.scheduleId, false));
  });

  router.serve('POST /schedules/:scheduleId/trigger', async (ctx) => {
    await schedules.trigger(requirePrincipal(ctx), ctx.params.scheduleId);
    ctx.status = 202;
    ctx.body = { scheduleId: ctx.params.scheduleId };
  });

  router.serve('DELETE /schedules/:scheduleId', async (ctx) => {
    await schedules.remove(requirePrincipal(ctx), ctx.params.scheduleId);
    ctx.status = 204;
  });

  return router.module();
}
