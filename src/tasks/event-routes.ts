import type { Context } from 'koa';
import { requirePrincipal, type Principal } from '../auth/principal';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { ApiError, ErrorCode, notFound } from '../http/errors';
import { validator } from '../http/validate';
import type { TaskEventStore } from '../task-events/event-store';
import { LogReader, type LogSource } from '../task-events/log-reader';
import { LogStream, type LogStreamDeps } from '../task-events/log-stream';
import type { TaskEvent } from '../task-events/task-event';
import { canReadComposition, canReadTask, readableTask } from './task-access';
import type { TaskDocument } from './task-document';
import type { TaskStore } from './task-store';

export interface TaskEventRoutesDeps extends LogStreamDeps {
  taskStore: TaskStore;
  eventStore: TaskEventStore;
}

/** An event id: `<seq>` on a task's stream, `<taskId>:<seq>` on a composition's; the seq orders the log either way. */
const EVENT_ID_PATTERN = '^(?:[^:]{1,256}:)?(?:0|[1-9][0-9]{0,14})$';
const EVENT_ID = new RegExp(EVENT_ID_PATTERN);

/** `?after=` and `?format=` of the event routes, as a query string carries them. */
const EVENTS_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    after: { type: 'string', pattern: EVENT_ID_PATTERN, description: 'an event id' },
    format: { enum: ['json'] },
  },
} as const;
const checkQuery = validator<{ after?: string; format?: 'json' }>(EVENTS_QUERY_SCHEMA, 'query string');

export const TASK_EVENT_ROUTES = routeTable({
  versioned: true,
  operations: {
    'GET /tasks/:taskId/events': {
      summary:
        "The task's event log as Server-Sent Events (stored, then live; resume with Last-Event-ID or after), or with format=json as an array",
      credential: 'any',
      query: EVENTS_QUERY_SCHEMA,
      success: [200, 'text/event-stream of {seq, taskId, type, at, ...}, or an array of them'],
    },
    'GET /compositions/:compositionId/events': {
      summary:
        "The composition's event log, every task's, as Server-Sent Events with ids <taskId>:<seq>, or with format=json as an array",
      credential: 'any',
      query: EVENTS_QUERY_SCHEMA,
      success: [200, 'text/event-stream of {seq, taskId, type, at, ...}, or an array of them'],
    },
  },
});

/** Where the stream starts: after `?after=`, else after `Last-Event-ID` (a reconnecting EventSource), else at the first event. */
function cursorOf(ctx: Context, after: string | undefined): number {
  const id = after ?? (ctx.get('Last-Event-ID') || undefined);
  if (id === undefined) return 0;
  if (!EVENT_ID.test(id))
    throw new ApiError(
      ErrorCode.VALIDATION_ERROR,
      `Last-Event-ID "${id.slice(0, 300)}" is not an event id of this stream`,
    );
  return Number(id.slice(id.lastIndexOf(':') + 1));
}

/** What a reader who may not read the task sees of its events (the agent of a sibling task): what happened, not its data. */
function outlineOf({ seq, taskId, type, at }: TaskEvent): Pick<TaskEvent, 'seq' | 'taskId' | 'type' | 'at'> {
  return { seq, taskId, type, at };
}

/** `GET /tasks/{taskId}/events` and `GET /compositions/{compositionId}/events`: a task's event log, stored then live. */
export function createTaskEventRoutes(deps: TaskEventRoutesDeps): RouteModule {
  const { taskStore, eventStore } = deps;
  const router = new DocumentedRouter(TASK_EVENT_ROUTES);

  async function answer(
    ctx: Context,
    source: LogSource,
    idOf: (event: TaskEvent) => string,
    view: (event: TaskEvent) => unknown,
    taskId?: string,
  ): Promise<void> {
    const query = checkQuery(ctx.query);
    const after = cursorOf(ctx, query.after);
    if (query.format === 'json') {
      const reader = new LogReader(source, taskStore, eventStore, after);
      await reader.next();
      ctx.body = reader.events.filter((event) => taskId === undefined || event.taskId === taskId).map(view);
      return;
    }
    const stream = new LogStream(ctx, deps);
    stream.follow(source, {
      taskId,
      after,
      deliver: (events) => {
        for (const event of events) stream.send(idOf(event), view(event));
      },
    });
  }

  router.serve('GET /tasks/:taskId/events', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const task = readableTask(principal, await taskStore.find(ctx.params.taskId), ctx.params.taskId);
    const source: LogSource =
      task.compositionId === undefined
        ? { kind: 'task', taskId: task._id }
        : { kind: 'composition', compositionId: task.compositionId };
    await answer(
      ctx,
      source,
      (event) => String(event.seq),
      (event) => event,
      task._id,
    );
  });

  router.serve('GET /compositions/:compositionId/events', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const composition = await taskStore.findComposition(ctx.params.compositionId);
    // Unknown to a caller who may not read it, as GET /compositions/{compositionId} does.
    if (!composition || !canReadComposition(principal, composition))
      throw notFound(`Composition ${ctx.params.compositionId}`);
    const readable = readableIds(principal, composition.tasks);
    await answer(
      ctx,
      { kind: 'composition', compositionId: composition.compositionId },
      (event) => `${event.taskId}:${event.seq}`,
      (event) => (readable.has(event.taskId) ? event : outlineOf(event)),
    );
  });

  return router.module();
}

function readableIds(principal: Principal, tasks: TaskDocument[]): Set<string> {
  return new Set(tasks.filter((task) => canReadTask(principal, task)).map((task) => task._id));
}
