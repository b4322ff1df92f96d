import { createHash } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import { requirePrincipal, type Principal } from '../auth/principal';
import type { RouteModule } from '../http/app';
import { visibleAgentOr404 } from '../registry/routes';
import type { Agent } from '../registry/agent';
import type { AgentStore } from '../registry/agent-store';
import type { IdempotencyKeys } from '../tasks/idempotency-keys';
import { canReadTask } from '../tasks/task-access';
import { cancelTask } from '../tasks/task-cancellation';
import type { TemporalHandle } from '../tasks/temporal-client';
import { ApiError, ErrorCode } from '../http/errors';
import type { TaskLauncher } from '../tasks/task-launcher';
import type { TaskStore } from '../tasks/task-store';
import { toTaskView } from '../tasks/task-views';
import { A2A_PROTOCOL_VERSION } from './agent-card';
import { a2aTask } from './a2a-task';
import { JsonRpcCode, JsonRpcError, readRequest } from './json-rpc';

export interface A2aEndpointDeps {
  agents: Pick<AgentStore, 'findVisible'>;
  launcher: TaskLauncher;
  taskStore: TaskStore;
  temporal: TemporalHandle;
  idempotencyKeys: IdempotencyKeys;
}

/** A2A methods this endpoint does not offer yet: the spec's "unsupported operation", not "no such method". */
const NOT_YET = new Set([
  'ListTasks',
  'SendStreamingMessage',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
]);

/**
 * `POST /a2a/{agentId}`: A2A 1.0's JSON-RPC binding for one agent of the registry, the interface its
 * Agent Card names. A message becomes a task of the agent (a workflow, with its retries), under the
 * caller's credential and the registry's visibility rules.
 */
export function createA2aEndpoint(deps: A2aEndpointDeps): RouteModule {
  const router = new Router();
  router.post('/a2a/:agentId', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const agent = await visibleAgentOr404(deps.agents, principal, ctx.params.agentId);
    let id: string | number | null = null;
    try {
      const request = readRequest(ctx.request.body);
      id = request.id ?? null;
      checkVersion(ctx);
      ctx.body = { jsonrpc: '2.0', id, result: await answer(principal, agent, request.method, request.params ?? {}) };
    } catch (error) {
      if (!(error instanceof JsonRpcError)) throw error;
      const { code, message, data } = error;
      ctx.body = { jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } };
    }
  });

  async function answer(
    principal: Principal,
    agent: Agent,
    method: string,
    params: Record<string, unknown>,
  ): Promise<unknown> {
    switch (method) {
      case 'SendMessage':
        return { task: await sendMessage(principal, agent, params) };
      case 'GetTask':
        return a2aTask(await readTask(principal, agent, taskIdIn(params, method)));
      case 'CancelTask':
        return cancel(principal, agent, taskIdIn(params, method));
      default:
        if (NOT_YET.has(method))
          throw new JsonRpcError(JsonRpcCode.UNSUPPORTED_OPERATION, `${method} is not offered by this endpoint`);
        throw new JsonRpcError(JsonRpcCode.METHOD_NOT_FOUND, `No method ${method}`);
    }
  }

  /** The message's task: its data part names the skill and its params; a lone tool takes a text part as `{text}`. */
  async function sendMessage(principal: Principal, agent: Agent, params: Record<string, unknown>) {
    const message = params.message as { messageId?: unknown; parts?: unknown } | undefined;
    if (typeof message?.messageId !== 'string' || !Array.isArray(message.parts))
      throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, 'SendMessage needs a message with a messageId and parts');
    const request = { agentId: agent.id, ...operationOf(agent, message.parts as Array<Record<string, unknown>>) };
    // A message sent again (same messageId, same caller) answers with the task the first one started.
    // A messageId may be any text; its digest is a valid Idempotency-Key whatever it holds.
    const key = `a2a:${createHash('sha256').update(message.messageId).digest('base64url')}`;
    const idempotency = deps.idempotencyKeys.forRequest(principal, key, 'a2a-message', request);
    const taskId = await deps.launcher.launchTask(principal, request, { idempotency });
    return a2aTask(await readTask(principal, agent, taskId));
  }

  /** As `POST /tasks/{taskId}/cancel`: a task that already ended is not cancelable (-32002). */
  async function cancel(principal: Principal, agent: Agent, taskId: string) {
    await readTask(principal, agent, taskId);
    try {
      await cancelTask(deps.taskStore, deps.temporal, principal, taskId);
    } catch (error) {
      if (error instanceof ApiError && error.code === ErrorCode.CONFLICT)
        throw new JsonRpcError(JsonRpcCode.TASK_NOT_CANCELABLE, error.message);
      throw error;
    }
    return a2aTask(await readTask(principal, agent, taskId));
  }

  async function readTask(principal: Principal, agent: Agent, taskId: string) {
    const task = await deps.taskStore.find(taskId);
    if (!task || task.agentId !== agent.id || !canReadTask(principal, task))
      throw new JsonRpcError(JsonRpcCode.TASK_NOT_FOUND, `Task ${taskId} not found`);
    return toTaskView(task);
  }

  return { router, versioned: false };
}

function taskIdIn(params: Record<string, unknown>, method: string): string {
  if (typeof params.id !== 'string') throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, `${method} needs an id`);
  return params.id;
}

function operationOf(
  agent: Agent,
  parts: Array<Record<string, unknown>>,
): { operation: string; params: Record<string, unknown> } {
  const tools = agent.capabilities.tools;
  const data = parts.find((part) => typeof part.data === 'object' && part.data !== null)?.data as
    { skill?: unknown; params?: unknown } | undefined;
  if (data) {
    const skill = typeof data.skill === 'string' ? data.skill : tools.length === 1 ? tools[0].name : undefined;
    if (!skill)
      throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, 'The data part needs a skill: the agent has several');
    const params = data.params ?? {};
    if (typeof params !== 'object' || params === null || Array.isArray(params))
      throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, "The data part's params must be an object");
    return { operation: `tools/${skill}`, params: params as Record<string, unknown> };
  }
  const text = parts.find((part) => typeof part.text === 'string')?.text as string | undefined;
  if (text !== undefined && tools.length === 1) return { operation: `tools/${tools[0].name}`, params: { text } };
  throw new JsonRpcError(
    JsonRpcCode.INVALID_PARAMS,
    'The message needs a data part {skill, params}, or a text part for an agent with a single tool',
  );
}

/** A2A-Version: absent means the version the card names; any other major than 1 is refused. */
function checkVersion(ctx: Context): void {
  const asked = ctx.get('a2a-version');
  if (asked && asked.split('.')[0] !== A2A_PROTOCOL_VERSION.split('.')[0])
    throw new JsonRpcError(
      JsonRpcCode.VERSION_NOT_SUPPORTED,
      `A2A-Version ${asked} is not supported; this endpoint speaks ${A2A_PROTOCOL_VERSION}`,
    );
}
