import type { Context } from 'koa';
import { requirePrincipal } from '../auth/principal';
import { abandonedSignal } from '../http/abandoned-signal';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { notFound } from '../http/errors';
import { validator } from '../http/validate';
import { canReadComposition, readableTask } from './task-access';
import { toCompositionView, toTaskView } from './task-views';
import type { TaskDocument } from './task-document';
import type { TaskClaims } from './task-claims';
import type { TaskStore } from './task-store';
import type { TaskWaits } from './task-waits';
import { IDEMPOTENCY_KEY_HEADER, type IdempotencyKeys } from './idempotency-keys';
import type { TaskLauncher } from './task-launcher';
import {
  AGENT_REPORT_SCHEMA,
  COMPOSITION_REQUEST_SCHEMA,
  refuseOversizedComposition,
  TASK_INPUT_SCHEMA,
  TASK_LOOKUP_QUERY_SCHEMA,
  TASK_REQUEST_SCHEMA,
  type TaskLookupQuery,
} from './task-request-schema';
import type { TemporalHandle } from './temporal-client';
import { cancelTask } from './task-cancellation';
import { deliverReport, type AgentReportBody } from './task-reports';
import { answerInput, type TaskInputBody, type TaskInputDeps } from './task-inputs';
import { parseLineageHeader, TASK_LINEAGE_HEADER } from '../agent-calls/task-lineage';
import { TaskStatus, type TaskRequest } from '../../workflows/task-types';

export interface TaskRoutesDeps {
  launcher: TaskLauncher;
  taskStore: TaskStore;
  claims: TaskClaims;
  /** `GET /tasks/{taskId}?waitMs=`. */
  waits: TaskWaits;
  idempotencyKeys: IdempotencyKeys;
  temporal: TemporalHandle;
  maxCompositionSize: number;
  /** Reports that ask for input, and the answers. */
  inputs: TaskInputDeps;
}

const checkTask = validator<TaskRequest>(TASK_REQUEST_SCHEMA, 'task request');
const checkComposition = validator<TaskRequest[]>(COMPOSITION_REQUEST_SCHEMA, 'composition');
const checkReport = validator<AgentReportBody>(AGENT_REPORT_SCHEMA, 'task report');
const checkLookup = validator<TaskLookupQuery>(TASK_LOOKUP_QUERY_SCHEMA, 'query string');
const checkInput = validator<TaskInputBody>(TASK_INPUT_SCHEMA, 'task input');

const DEPTH_EXCEEDED =
  'TASK_DEPTH_EXCEEDED: the task would lie more than MAX_TASK_DEPTH hops below its root (docs/api.md, "Lineage")';

/** The task a request names in ACS-Task-Lineage, if it names one; 400 when the header does not parse. */
const parentNamedBy = (ctx: Context) => parseLineageHeader(ctx.get(TASK_LINEAGE_HEADER) || undefined);

export const TASK_ROUTES = routeTable({
  versioned: true,
  operations: {
    'POST /tasks': {
      summary:
        'Create a task; checks run before anything starts; Idempotency-Key makes a repeat answer the same task; ACS-Task-Lineage starts it on behalf of another task',
      credential: 'any',
      body: TASK_REQUEST_SCHEMA,
      success: [202, '{taskId, status: "pending"} with Location'],
      errors: { '422': DEPTH_EXCEEDED },
    },
    'POST /tasks/compose': {
      summary:
        'Create a composition of tasks with parents, pending arguments, conditions and maps (forEach); ACS-Task-Lineage starts them on behalf of another task',
      credential: 'any',
      body: COMPOSITION_REQUEST_SCHEMA,
      success: [202, 'Array of {taskId, status, compositionId} in input order'],
      errors: {
        '400':
          'VALIDATION_ERROR, OPERATION_NOT_SUPPORTED or INVALID_COMPOSITION: a bad graph, an item argument outside a map, or a pending or item argument or a map\'s array that surely cannot be filled (a field its parent\'s outputSchema lacks, a map\'s field that is no array, a type that cannot fit the param); details name both tasks and the JSON pointers (docs/api.md, "Typed arguments", "Maps")',
        '422': DEPTH_EXCEEDED,
      },
    },
    'GET /tasks/:taskId': {
      summary:
        'A task: status, phase, result or error (creator, executing agent, admin); with waitMs (up to 30000), a pending task is answered once it ends',
      credential: 'any',
      query: TASK_LOOKUP_QUERY_SCHEMA,
      success: [200, 'The task'],
    },
    'POST /tasks/:taskId/result': {
      summary: "The executing agent's report on a task it answered 202 to",
      credential: 'any',
      body: AGENT_REPORT_SCHEMA,
      success: [200, '{taskId, status}'],
    },
    'POST /tasks/:taskId/input': {
      summary:
        "A person's answer to the task's input request (creator, a person in the task's room, admin); checked against its inputSchema; 409 once answered",
      credential: 'any',
      body: TASK_INPUT_SCHEMA,
      success: [200, '{taskId, status: "pending", requestId}'],
    },
    'POST /tasks/:taskId/cancel': {
      summary:
        'Cancel a pending task (creator or admin); dependants fail, the tasks started on its behalf are cancelled, down the tree; 409 once ended',
      credential: 'any',
      success: [200, '{taskId, status: "cancelled"}'],
    },
    'GET /compositions/:compositionId': {
      summary: 'A composition and its tasks',
      credential: 'any',
      success: [200, 'The composition'],
    },
  },
});

/** /tasks and /compositions: creation, composition and lookup of tasks. Served bare and under /v1. */
export function createTaskRoutes({
  launcher,
  taskStore,
  claims,
  waits,
  idempotencyKeys,
  temporal,
  maxCompositionSize,
  inputs,
}: TaskRoutesDeps): RouteModule {
  const router = new DocumentedRouter(TASK_ROUTES);
  const idempotencyOf = (ctx: Context, route: string, body: unknown) =>
    idempotencyKeys.forRequest(requirePrincipal(ctx), ctx.get(IDEMPOTENCY_KEY_HEADER) || undefined, route, body);

  router.serve('POST /tasks', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const request = checkTask(ctx.request.body);
    const taskId = await launcher.launchTask(principal, request, {
      idempotency: idempotencyOf(ctx, 'task', request),
      onBehalfOf: parentNamedBy(ctx),
    });
    ctx.status = 202;
    ctx.set('Location', `/tasks/${taskId}`);
    ctx.body = { taskId, status: TaskStatus.PENDING };
  });

  router.serve('POST /tasks/compose', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const body = ctx.request.body;
    // Before the body's schema check, which a long array makes costly; the launcher checks every other caller's.
    if (Array.isArray(body)) refuseOversizedComposition(body.length, maxCompositionSize);
    const requests = checkComposition(body);
    const { compositionId, taskIds } = await launcher.launchComposition(
      principal,
      requests,
      idempotencyOf(ctx, 'composition', requests),
      parentNamedBy(ctx),
    );
    ctx.status = 202;
    ctx.set('Location', `/compositions/${compositionId}`);
    ctx.body = taskIds.map((taskId) => ({ taskId, status: TaskStatus.PENDING, compositionId }));
  });

  // With waitMs, a pending task is answered once it ends (or when waitMs ran out, still pending).
  // A task the caller may not read is answered as an unknown one: a 403 would tell that the id exists.
  router.serve('GET /tasks/:taskId', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const waitMs = Number(checkLookup(ctx.query).waitMs ?? 0);
    const readable = (task: TaskDocument | null): TaskDocument => readableTask(principal, task, ctx.params.taskId);
    const task =
      waitMs > 0
        ? await waits.whenNotPending(ctx.params.taskId, waitMs, abandonedSignal(ctx), readable)
        : readable(await taskStore.find(ctx.params.taskId));
    ctx.body = toTaskView(task);
  });

  router.serve('POST /tasks/:taskId/result', async (ctx) => {
    const principal = requirePrincipal(ctx);
    ctx.body = await deliverReport(inputs, principal, ctx.params.taskId, checkReport(ctx.request.body));
  });

  router.serve('POST /tasks/:taskId/input', async (ctx) => {
    const principal = requirePrincipal(ctx);
    ctx.body = await answerInput(inputs, principal, ctx.params.taskId, checkInput(ctx.request.body));
  });

  router.serve('POST /tasks/:taskId/cancel', async (ctx) => {
    const principal = requirePrincipal(ctx);
    ctx.body = await cancelTask({ taskStore, claims, temporal }, principal, ctx.params.taskId);
  });

  router.serve('GET /compositions/:compositionId', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const composition = await taskStore.findComposition(ctx.params.compositionId);
    // Unknown to a caller who may not read it, as GET /tasks/{taskId} does.
    if (!composition || !canReadComposition(principal, composition))
      throw notFound(`Composition ${ctx.params.compositionId}`);
    ctx.body = toCompositionView(composition, principal);
  });

  return router.module();
}
