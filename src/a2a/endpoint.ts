import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { requirePrincipal, type Principal } from '../auth/principal';
import { abandonedSignal } from '../http/abandoned-signal';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { visibleAgentOr404 } from '../registry/routes';
import type { Agent } from '../registry/agent';
import type { AgentStore } from '../registry/agent-store';
import { IdempotencyKeyReusedError, type IdempotencyClaim, type IdempotencyKeys } from '../tasks/idempotency-keys';
import { answerInput, type TaskInputDeps } from '../tasks/task-inputs';
import type { TaskDocument } from '../tasks/task-document';
import type { TaskClaims } from '../tasks/task-claims';
import type { TaskStore } from '../tasks/task-store';
import type { TaskWaits } from '../tasks/task-waits';
import { isLive } from '../../workflows/task-types';
import { canReadTask } from '../tasks/task-access';
import { cancelTask } from '../tasks/task-cancellation';
import type { TemporalHandle } from '../tasks/temporal-client';
import { ApiError, ErrorCode } from '../http/errors';
import type { TaskLauncher } from '../tasks/task-launcher';
import { parseLineageHeader, TASK_LINEAGE_HEADER, type ParentTask } from '../agent-calls/task-lineage';
import { targetOf } from './a2a-context';
import { a2aTask } from './a2a-task';
import { answerJsonRpc, jsonRpcErrorsOn, methodNotServed } from './a2a-exchange';
import { JSON_RPC_REQUEST_SCHEMA, JsonRpcCode, JsonRpcError } from './json-rpc';
import {
  paramsOf,
  refusePushConfig,
  refuseUnsupportedParts,
  skillCallOf,
  type MessagePart,
  type SendMessageParams,
} from './method-params';
import { listTasks } from './task-list';
import { streamTask, type TaskStreamDeps } from './task-stream';

export interface A2aEndpointDeps extends TaskStreamDeps {
  agents: Pick<AgentStore, 'findVisible'>;
  launcher: TaskLauncher;
  taskStore: TaskStore;
  claims: TaskClaims;
  /** SendMessage answers once the task left `pending`. */
  waits: TaskWaits;
  temporal: TemporalHandle;
  idempotencyKeys: IdempotencyKeys;
  /** A message to a task waiting for input answers it, as `POST /tasks/{taskId}/input` does. */
  inputs: TaskInputDeps;
}

export const A2A_ENDPOINT_ROUTES = routeTable({
  versioned: false,
  operations: {
    'POST /a2a/:agentId': {
      summary:
        "The agent's A2A 1.0 JSON-RPC endpoint (docs/a2a.md): SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask and SubscribeToTask",
      credential: 'any',
      body: JSON_RPC_REQUEST_SCHEMA,
      success: [
        200,
        'A JSON-RPC response: its result, or its error with an A2A or JSON-RPC code and google.rpc.ErrorInfo data (malformed JSON and a non-JSON body too); for SendStreamingMessage and SubscribeToTask a text/event-stream of them; 204 and nothing done for a notification (no id)',
      ],
      errors: { '404': 'AGENT_NOT_FOUND' },
    },
  },
});

/** What a method answers: one JSON-RPC result, or a stream of them over Server-Sent Events for the task. */
type Answer = { result: unknown } | { stream: TaskDocument };

/**
 * `POST /a2a/{agentId}`: A2A 1.0's JSON-RPC binding for one agent of the registry, the interface its
 * Agent Card names. A message becomes a task of the agent (a workflow, with its retries), under the
 * caller's credential and the registry's visibility rules.
 */
export function createA2aEndpoint(deps: A2aEndpointDeps): RouteModule {
  const router = new DocumentedRouter(A2A_ENDPOINT_ROUTES);
  router.serve('POST /a2a/:agentId', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const agent = await visibleAgentOr404(deps.agents, principal, ctx.params.agentId);
    await answerJsonRpc(ctx, async ({ id, method, params }) => {
      const onBehalfOf = parentNamedBy(ctx);
      const answered = await answer(principal, agent, method, params, abandonedSignal(ctx), onBehalfOf);
      return 'stream' in answered ? () => streamTask(ctx, deps, id, answered.stream) : answered;
    });
  });

  async function answer(
    principal: Principal,
    agent: Agent,
    method: string,
    params: Record<string, unknown>,
    abandoned: AbortSignal,
    onBehalfOf: ParentTask | undefined,
  ): Promise<Answer> {
    switch (method) {
      case 'SendMessage': {
        const sent = paramsOf('SendMessage', params);
        const task = await sendMessage(principal, agent, sent, onBehalfOf);
        // A2A's default (§3.2.2): the answer waits for the task to end or ask for input, however
        // long that is, until the caller goes away; returnImmediately or a stream answer at once.
        const answered = sent.configuration?.returnImmediately
          ? task
          : await deps.waits.whenNotPending(task._id, Number.POSITIVE_INFINITY, abandoned, (found) => found ?? task);
        return { result: { task: a2aTask(answered) } };
      }
      case 'SendStreamingMessage':
        return { stream: await sendMessage(principal, agent, paramsOf('SendMessage', params), onBehalfOf) };
      case 'GetTask':
        return { result: a2aTask(await readTask(principal, agent, paramsOf('GetTask', params).id)) };
      case 'ListTasks':
        return { result: await listTasks(deps.taskStore, principal, agent, paramsOf('ListTasks', params)) };
      case 'CancelTask':
        return { result: await cancel(principal, agent, paramsOf('TaskId', params).id) };
      case 'SubscribeToTask': {
        const task = await readTask(principal, agent, paramsOf('TaskId', params).id);
        if (!isLive(task.status))
          throw new JsonRpcError(JsonRpcCode.UNSUPPORTED_OPERATION, `Task ${task._id} ended ${task.status}`);
        return { stream: task };
      }
      default:
        throw methodNotServed(method);
    }
  }

  /**
   * The message's task. A message that names a task waiting for input (itself, or through its
   * context: targetOf) answers it; any other starts a task in the message's context: its data part
   * names the skill and its params, and a lone tool takes a text part as `{text}`. A push
   * notification config is refused (-32003): the card says the agent sends none. A task started on
   * behalf of another (ACS-Task-Lineage) past MAX_TASK_DEPTH is refused (-32050).
   */
  async function sendMessage(
    principal: Principal,
    agent: Agent,
    { message, configuration }: SendMessageParams,
    onBehalfOf: ParentTask | undefined,
  ) {
    refusePushConfig(configuration);
    refuseUnsupportedParts(message.parts);
    // A message sent again (same messageId, same caller) answers with the task the first one started.
    // A messageId may be any text; its digest is a valid Idempotency-Key whatever it holds.
    const digest = createHash('sha256').update(message.messageId).digest('base64url');
    const key = `a2a:${digest}`;
    // A message that answered an input request is remembered under a key of its own.
    const answerKey = `a2a-answer:${digest}`;
    const target = await targetOf(
      {
        taskStore: deps.taskStore,
        readTask: (taskId) => readTask(principal, agent, taskId),
        started: async () => (await deps.idempotencyKeys.claimedIds(principal, key)) !== null,
        answered: async () => (await deps.idempotencyKeys.claimedIds(principal, answerKey))?.taskIds[0],
      },
      principal,
      agent.id,
      message,
    );
    if ('answered' in target) return target.answered;
    if ('answers' in target) {
      const answered = await answerInputWith(principal, agent, target.answers._id, message.parts);
      await remember(deps.idempotencyKeys.forRequest(principal, answerKey, 'a2a-answer', {}), answered._id);
      return answered;
    }
    const request = { agentId: agent.id, ...operationOf(agent, message.parts) };
    const origin = target.startsIn === undefined ? {} : { contextId: target.startsIn };
    const idempotency = deps.idempotencyKeys.forRequest(principal, key, 'a2a-message', { ...request, ...origin });
    let taskId: string;
    try {
      taskId = await deps.launcher.launchTask(principal, request, { idempotency, onBehalfOf, origin });
    } catch (error) {
      if (!(error instanceof IdempotencyKeyReusedError)) throw error;
      const reused = 'This messageId was already sent with a different message: a message sent again must be the same';
      throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, reused, {
        metadata: { messageId: message.messageId },
        details: [{ path: '/message/messageId', message: 'was already sent with a different message' }],
      });
    }
    return readTask(principal, agent, taskId);
  }

  /** The message's data part (else its text) as the input the task waits for. */
  async function answerInputWith(principal: Principal, agent: Agent, taskId: string, parts: MessagePart[]) {
    const data = parts.find((part) => part.data !== undefined)?.data;
    const input = data ?? parts.find((part) => part.text !== undefined)?.text;
    if (input === undefined)
      throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, 'The message needs a data or text part: the input');
    await answerInput(deps.inputs, principal, taskId, { input });
    return readTask(principal, agent, taskId);
  }

  /** As `POST /tasks/{taskId}/cancel`: a task that already ended is not cancelable (-32002). */
  async function cancel(principal: Principal, agent: Agent, taskId: string) {
    await readTask(principal, agent, taskId);
    try {
      await cancelTask(deps, principal, taskId);
    } catch (error) {
      if (error instanceof ApiError && error.code === ErrorCode.CONFLICT)
        throw new JsonRpcError(JsonRpcCode.TASK_NOT_CANCELABLE, error.message, { metadata: { taskId } });
      throw error;
    }
    return a2aTask(await readTask(principal, agent, taskId));
  }

  async function readTask(principal: Principal, agent: Agent, taskId: string): Promise<TaskDocument> {
    const task = await deps.taskStore.find(taskId);
    if (!task || task.agentId !== agent.id || !canReadTask(principal, task))
      throw new JsonRpcError(JsonRpcCode.TASK_NOT_FOUND, `Task ${taskId} not found`, { metadata: { taskId } });
    return task;
  }

  return {
    ...router.module(),
    presentErrors: jsonRpcErrorsOn(ENDPOINT_PATH),
  };
}

/** The path of `POST /a2a/:agentId` as the router matches it: any case, with a trailing slash or not. */
const ENDPOINT_PATH = /^\/a2a\/[^/]+\/?$/i;

/** Claims `claim` for the task a message answered, for a repeat of the message to find (TargetReads.answered). */
async function remember(claim: IdempotencyClaim | undefined, taskId: string): Promise<void> {
  if (claim && (await claim.claim({ taskIds: [taskId] }, null)) === null) await claim.confirm();
}

function operationOf(agent: Agent, parts: MessagePart[]): { operation: string; params: Record<string, unknown> } {
  const tools = agent.capabilities.tools;
  const called = skillCallOf(parts);
  if (called) {
    const skill = typeof called.skill === 'string' ? called.skill : tools.length === 1 ? tools[0].name : undefined;
    if (!skill)
      throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, 'The data part needs a skill: the agent has several');
    return { operation: `tools/${skill}`, params: called.params };
  }
  const text = parts.find((part) => typeof part.text === 'string')?.text;
  if (text !== undefined && tools.length === 1) return { operation: `tools/${tools[0].name}`, params: { text } };
  throw new JsonRpcError(
    JsonRpcCode.INVALID_PARAMS,
    'The message needs a data part {skill, params}, or a text part for an agent with a single tool',
  );
}

/** The task the request names in ACS-Task-Lineage, if any; a header that does not parse is an invalid request (-32600). */
function parentNamedBy(ctx: Context): ParentTask | undefined {
  try {
    return parseLineageHeader(ctx.get(TASK_LINEAGE_HEADER) || undefined);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw new JsonRpcError(JsonRpcCode.INVALID_REQUEST, error.message, { details: error.details });
  }
}
