import type { Context } from 'koa';
import { WorkflowNotFoundError } from '@temporalio/common';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { ApiError, ErrorCode } from '../http/errors';
import { isA2aPushToken } from '../agent-calls/a2a-push';
import type { TaskStore } from '../tasks/task-store';
import type { TemporalHandle } from '../tasks/temporal-client';
import { a2aTaskPushedSignal, isLive, workflowIdOf } from '../../workflows/task-types';

export const A2A_PUSH_ROUTES = routeTable({
  versioned: false,
  operations: {
    'POST /a2a-push/:taskId': {
      summary:
        "An A2A agent's push notification of the task it goes on with for this one (docs/a2a.md): the agent's task is polled now",
      credential: 'none',
      success: [204, 'Nothing: the notification was taken, or the task has ended'],
      errors: { '401': "UNAUTHENTICATED: no Bearer token, or not the task's", '404': 'NOT_FOUND: no such task' },
    },
  },
});

export interface A2aPushDeps {
  taskStore: Pick<TaskStore, 'find'>;
  temporal: TemporalHandle;
  /** SECRETS_KEY and SECRETS_KEY_PREVIOUS: a task's token is an HMAC under one of them (src/agent-calls/a2a-push.ts). */
  keys: Buffer[];
  /** Counts the request against its address's budget of anonymous requests. */
  countAnonymous: (ctx: Context) => Promise<void>;
}

/**
 * `POST /a2a-push/{taskId}`, where the A2A agents the service asked to push their tasks' updates
 * send them. Its credential is the task's own bearer token, which the API's authentication would
 * take for a session token: the route is served before it (authenticatesItself) and counts as an
 * anonymous request. The body is not read: the poll it brings forward reads the agent's task.
 */
export function createA2aPushRoutes({ taskStore, temporal, keys, countAnonymous }: A2aPushDeps): RouteModule {
  const router = new DocumentedRouter(A2A_PUSH_ROUTES);
  router.serve('POST /a2a-push/:taskId', async (ctx) => {
    await countAnonymous(ctx);
    const { taskId } = ctx.params;
    const [scheme, token] = ctx.get('authorization').split(' ');
    if (scheme?.toLowerCase() !== 'bearer' || !token || !isA2aPushToken(keys, taskId, token))
      throw new ApiError(ErrorCode.UNAUTHENTICATED, `No valid push notification token for task ${taskId}`);
    const task = await taskStore.find(taskId);
    if (!task) throw new ApiError(ErrorCode.NOT_FOUND, `Task ${taskId} not found`);
    if (isLive(task.status)) {
      try {
        await temporal.client.workflow.getHandle(workflowIdOf(task)).signal(a2aTaskPushedSignal, taskId);
      } catch (error) {
        // The run ended meanwhile: nothing is left to poll.
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
    }
    ctx.status = 204;
  });
  return { ...router.module(), authenticatesItself: true };
}
