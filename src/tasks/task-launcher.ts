import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/common';
import type { Principal } from '../auth/principal';
import type { Config } from '../config/config';
import type { Logger } from '../ops/logger';
import { ApiError, ErrorCode, UnavailableError, UnavailableReason } from '../http/errors';
import { summariseProblems } from '../http/validate';
import type { Agent } from '../registry/agent';
import type { RecentAgents } from '../registry/recent-agents';
import { SchemaRejected } from '../user-schemas/compiler';
import type { JsonSchema } from '../user-schemas/json-schema';
import type { SchemaChecks } from '../user-schemas/schema-checks';
import type { compositionWorkflow } from '../../workflows/composition';
import { checkCompositionGraph } from './composition-graph';
import type { IdempotencyClaim, LaunchedIds } from './idempotency-keys';
import { checkParams, findOperation } from './operations';
import { requireCallableUrl } from '../agent-calls/outbound-guard';
import { pendingArgumentsOf } from '../../workflows/pending-arguments';
import { itemArgumentsOf } from '../../workflows/item-arguments';
import { AGENT_ID_ATTRIBUTE, OPERATION_ATTRIBUTE } from '../../workflows/search-attributes';
import type { NewTask } from './task-document';
import { lineageUnder, type NamedParent, type TaskLineage } from './task-lineage';
import type { TaskStore } from './task-store';
import { refuseOversizedComposition } from './task-request-schema';
import { checkTypedArguments, type ComposedTool } from './typed-arguments';
import {
  TaskPhase,
  DEFAULT_MAP_CONCURRENCY,
  DEFAULT_RETRY,
  ItemFailurePolicy,
  workflowIdOfComposition,
  workflowIdOfTask,
  type CompositionInput,
  type MapPlan,
  type MapRequest,
  type PlannedTask,
  type TaskOrigin,
  type TaskRequest,
} from '../../workflows/task-types';
import type { TemporalHandle } from './temporal-client';

export interface TaskLauncherDeps {
  agents: RecentAgents;
  taskStore: TaskStore;
  temporal: Pick<TemporalHandle, 'client'>;
  schemas: SchemaChecks;
  config: Pick<
    Config,
    | 'taskQueue'
    | 'defaultTaskTimeoutMs'
    | 'maxTaskTimeoutMs'
    | 'agentCallTimeoutMs'
    | 'callbackSigningSecret'
    | 'allowInsecureAgentUrls'
    | 'maxTaskDepth'
    | 'maxCompositionSize'
  >;
  /** Each started workflow gets a line naming its tasks. */
  logger: Logger;
}

/** Longest staticSummary shown in the Temporal Web UI's list. */
const SUMMARY_CHARS = 200;

/**
 * Workflow task timeout of a task's workflow: how long a crashed worker's workflow task waits before
 * another worker takes it up. The bookkeeping runs as local activities inside a workflow task (and so
 * does the agent call of runs started before it became a regular activity, VISIBLE_AGENT_CALLS),
 * which the worker renews at 80 % of this while one runs: a cancellation or a report that arrives
 * meanwhile waits for that renewal, up to 4 s (8 s with Temporal's default of 10 s).
 */
const WORKFLOW_TASK_TIMEOUT = '5 seconds';

/**
 * Checks task requests completely, records them in the task store and starts their workflow. Nothing
 * starts unless every element passed: a 4xx leaves no trace.
 */
export class TaskLauncher {
  constructor(private readonly deps: TaskLauncherDeps) {}

  /**
   * With an idempotency claim, a repeat returns the first launch's id and starts nothing. With
   * `onBehalfOf`, the task is started for that one (its lineage: lineageUnder). `origin` goes on the
   * task's record: the room it was requested in, the A2A context its message was sent in.
   */
  async launchTask(
    principal: Principal,
    request: TaskRequest,
    {
      idempotency,
      origin = {},
      onBehalfOf,
    }: {
      idempotency?: IdempotencyClaim;
      origin?: Omit<LaunchOrigin, keyof TaskLineage>;
      onBehalfOf?: NamedParent;
    } = {},
  ): Promise<string> {
    const lineage = await this.lineage(principal, onBehalfOf);
    const planned = await this.planTask(principal, request);
    const task =
      origin.roomId && origin.requestedBy
        ? { ...planned, room: { roomId: origin.roomId, requestedBy: origin.requestedBy } }
        : planned;
    const launched = await this.start(
      principal,
      { tasks: [task], agentCallTimeoutMs: this.deps.config.agentCallTimeoutMs },
      workflowIdOfTask(task.taskId),
      idempotency,
      { ...origin, ...lineage },
    );
    return launched.taskIds[0];
  }

  /** With `onBehalfOf`, every task of the composition is started for that one. */
  async launchComposition(
    principal: Principal,
    requests: TaskRequest[],
    idempotency?: IdempotencyClaim,
    onBehalfOf?: NamedParent,
  ): Promise<Required<LaunchedIds>> {
    const lineage = await this.lineage(principal, onBehalfOf);
    const tasks = await this.planComposition(principal, requests);
    const compositionId = randomUUID();
    const launched = await this.start(
      principal,
      { compositionId, tasks, agentCallTimeoutMs: this.deps.config.agentCallTimeoutMs },
      workflowIdOfComposition(compositionId),
      idempotency,
      lineage,
    );
    return { compositionId: launched.compositionId ?? compositionId, taskIds: launched.taskIds };
  }

  /**
   * The checks launchTask and launchComposition make, agent visibility included, without writing or
   * starting anything: for requests kept to be launched later (a schedule's action). The requests
   * stay as given (the checks fill in the schemas' defaults on copies).
   */
  async check(principal: Principal, action: { task: TaskRequest } | { composition: TaskRequest[] }): Promise<void> {
    if ('task' in action) await this.planTask(principal, structuredClone(action.task));
    else await this.planComposition(principal, structuredClone(action.composition));
  }

  private async planTask(principal: Principal, request: TaskRequest): Promise<PlannedTask> {
    const compositionOnly = [
      [pendingArgumentsOf(request.params), 'a pending argument', 'a parent'],
      [itemArgumentsOf(request.params), 'an item argument', 'a task with forEach'],
    ] as const;
    for (const [[first], what, need] of compositionOnly) {
      if (first) {
        throw new ApiError(
          ErrorCode.VALIDATION_ERROR,
          `Param "${first[0]}" is ${what}: those need ${need} in POST /tasks/compose`,
        );
      }
    }
    const { task } = await this.plan(principal, request, [], new Map());
    return task;
  }

  private async planComposition(principal: Principal, requests: TaskRequest[]): Promise<PlannedTask[]> {
    refuseOversizedComposition(requests.length, this.deps.config.maxCompositionSize);
    const parentsOf = checkCompositionGraph(requests);
    const agentsById = new Map<string, Agent | null>();
    const tasks: PlannedTask[] = [];
    const tools: ComposedTool[] = [];
    for (const [position, request] of requests.entries()) {
      const { task, tool } = await this.plan(principal, request, parentsOf[position], agentsById, position);
      tasks.push(task);
      tools.push(tool);
    }
    checkTypedArguments(requests, tools);
    return tasks;
  }

  /** The lineage of tasks started on behalf of `parent`, checked first: the refusal that ends a loop costs least. */
  private async lineage(principal: Principal, parent: NamedParent | undefined): Promise<TaskLineage | undefined> {
    if (parent === undefined) return undefined;
    const { taskStore, agents, config } = this.deps;
    return lineageUnder({ taskStore, agents, maxTaskDepth: config.maxTaskDepth }, principal, parent);
  }

  /** One checked task, and the tool it calls; `position` is its index in a composition, named in every error. */
  private async plan(
    principal: Principal,
    request: TaskRequest,
    parents: number[],
    agentsById: Map<string, Agent | null>,
    position?: number,
  ): Promise<{ task: PlannedTask; tool: ComposedTool }> {
    const where = position === undefined ? '' : `Task ${position}: `;
    if (!agentsById.has(request.agentId))
      agentsById.set(request.agentId, await this.deps.agents.findVisible(principal, request.agentId));
    const agent = agentsById.get(request.agentId);
    if (!agent) throw new ApiError(ErrorCode.AGENT_NOT_FOUND, `${where}Agent ${request.agentId} not found`);

    const lookup = findOperation(agent, request.operation);
    if (!lookup.found) throw new ApiError(lookup.code, `${where}${lookup.message}`);
    // Params holding pending or item arguments are checked after substitution, at run time (per item).
    if (pendingArgumentsOf(request.params).length === 0 && itemArgumentsOf(request.params).length === 0) {
      const checked = await checkParams(this.deps.schemas, agent, request.operation, lookup.entry, request.params);
      if (!checked.valid) {
        throw new ApiError(
          ErrorCode.VALIDATION_ERROR,
          `${where}params do not match the inputSchema of ${request.operation}: ${summariseProblems(checked.problems)}`,
          checked.problems,
        );
      }
      // With the schema's defaults, as the agent will receive them.
      request.params = checked.params;
    }
    if (request.when !== undefined) await this.checkConditionSchema(request.when.schema, where);
    const { maxTaskTimeoutMs, defaultTaskTimeoutMs, callbackSigningSecret, allowInsecureAgentUrls } = this.deps.config;
    // The signed result goes to callbackUrl: the rules of the agents' URLs, which receive the same.
    requireCallableUrl(request.callbackUrl, 'callbackUrl', allowInsecureAgentUrls, position);
    if (request.callbackUrl !== undefined && callbackSigningSecret === undefined) {
      // Accepted, the callback could never be signed: the caller would wait for it in vain.
      throw new ApiError(
        ErrorCode.VALIDATION_ERROR,
        `${where}callbackUrl cannot be used: this service has no CALLBACK_SIGNING_SECRET to sign callbacks with`,
      );
    }
    if (request.timeoutMs !== undefined && request.timeoutMs > maxTaskTimeoutMs) {
      throw new ApiError(ErrorCode.VALIDATION_ERROR, `${where}timeoutMs must be at most ${maxTaskTimeoutMs}`);
    }
    const retry = { ...DEFAULT_RETRY, ...request.retry };
    if (retry.maxIntervalMs < retry.initialIntervalMs) {
      // Temporal refuses such a policy when the workflow schedules the call: catch it while the caller is here.
      throw new ApiError(
        ErrorCode.VALIDATION_ERROR,
        `${where}retry.maxIntervalMs (${retry.maxIntervalMs}${request.retry?.maxIntervalMs === undefined ? ', the default' : ''}) must be at least retry.initialIntervalMs (${retry.initialIntervalMs})`,
      );
    }
    const task: PlannedTask = {
      taskId: randomUUID(),
      agentId: agent.id,
      agentName: agent.name,
      operation: request.operation,
      params: request.params,
      parents,
      executeOnParentFailure: request.executeOnParentFailure ?? false,
      ...(request.when === undefined ? {} : { when: request.when }),
      ...(request.runIfParentSkipped ? { runIfParentSkipped: true } : {}),
      ...(request.forEach === undefined ? {} : { forEach: mapPlanOf(request.forEach) }),
      timeoutMs: request.timeoutMs ?? defaultTaskTimeoutMs,
      retry,
      ...(request.callbackUrl === undefined ? {} : { callbackUrl: request.callbackUrl }),
      notifyAgent: agent.callbackUrl !== undefined,
    };
    return { task, tool: { agent, operation: request.operation, entry: lookup.entry } };
  }

  /**
   * A condition's schema is compiled as an agent's tool schema is, within the same limits: 400 with
   * the pointer of the part at fault, in the schema.
   */
  private async checkConditionSchema(schema: JsonSchema, where: string): Promise<void> {
    try {
      await this.deps.schemas.compile(schema);
    } catch (error) {
      if (!(error instanceof SchemaRejected)) throw error;
      throw new ApiError(
        ErrorCode.VALIDATION_ERROR,
        `${where}the schema of its condition (when) cannot be used: ${error.message}`,
        error.pointer === undefined ? undefined : { pointer: error.pointer },
      );
    }
  }

  /**
   * Idempotency claim first, with what a repeat needs to finish the launch: a repeat ends there
   * with the first launch's ids, or finishes it (finish). Then the task store, then the workflow: its
   * activities update documents that must already exist. If the task store fails, or the workflow
   * certainly did not start, the documents and the claim go again, so that a retry with the same
   * key can start the tasks, and the caller gets the error. A start that failed although the
   * workflow runs is a launch like any other; one whose outcome Temporal cannot tell keeps both, as
   * removing them would leave a running workflow without its tasks.
   */
  private async start(
    principal: Principal,
    input: CompositionInput,
    workflowId: string,
    idempotency?: IdempotencyClaim,
    origin: LaunchOrigin = {},
  ): Promise<LaunchedIds> {
    const { taskStore, temporal } = this.deps;
    const ids: LaunchedIds = {
      taskIds: input.tasks.map((task) => task.taskId),
      ...(input.compositionId === undefined ? {} : { compositionId: input.compositionId }),
    };
    const launch: StoredLaunch = { workflowId, input, origin };
    const earlier = await idempotency?.claim(ids, launch);
    if (earlier && idempotency) {
      // Claims written before launches were stored cannot be finished: they answer as they did.
      return earlier.started || earlier.launch === undefined
        ? earlier.ids
        : this.finish(principal, earlier.launch as StoredLaunch, earlier.ids, idempotency);
    }
    const undo = async (error: unknown) => {
      // A repeat finishing this launch has started, or will start, the workflow: its tasks stay.
      if (idempotency && !(await idempotency.takeOver(ids, 'undo').catch(() => false))) {
        throw Object.assign(
          new UnavailableError(
            UnavailableReason.LAUNCH_IN_DOUBT,
            'This launch failed, and a repeat with the same Idempotency-Key is starting its tasks: send the request again with the same key',
            ids,
            { 'Retry-After': '1' },
          ),
          { cause: error },
        );
      }
      await taskStore.remove(ids.taskIds, input.compositionId).catch(() => undefined);
      await idempotency?.release().catch(() => undefined);
      throw error;
    };
    try {
      await taskStore.create(principal, recordsOf(input, origin), input.compositionId);
    } catch (error) {
      await undo(error);
    }
    try {
      await this.startWorkflow(launch);
    } catch (error) {
      if (!(await startedAnyway(temporal, workflowId, error, ids, idempotency !== undefined))) await undo(error);
    }
    // The tasks run whatever happens here: a failed confirmation only makes repeats finish the launch again.
    await idempotency?.confirm().catch(() => undefined);
    this.logStarted(workflowId, input);
    return ids;
  }

  private logStarted(workflowId: string, { compositionId, tasks }: CompositionInput): void {
    if (compositionId === undefined) {
      const [{ taskId, agentId, operation }] = tasks;
      this.deps.logger.info({ taskId, workflowId, agentId, operation }, 'task started');
    } else {
      this.deps.logger.info({ compositionId, workflowId, tasks: tasks.length }, 'composition started');
    }
  }

  /**
   * Finishes the launch of a first request with the same key that has not confirmed it within the
   * wait bound: its process may have ended between the claim and the task store, or between the task store
   * and the start. Writes the task store records it may lack, starts the workflow unless it exists, and
   * confirms. Every step is idempotent, so a first request that was only slow, or concurrent
   * repeats, still run the tasks once. After the first request undid its launch, a 503: the key is
   * free again, and a retry launches afresh.
   */
  private async finish(
    principal: Principal,
    launch: StoredLaunch,
    ids: LaunchedIds,
    idempotency: IdempotencyClaim,
  ): Promise<LaunchedIds> {
    if (!(await idempotency.takeOver(ids, 'finish'))) {
      throw new UnavailableError(
        UnavailableReason.LAUNCH_IN_DOUBT,
        'The first request with this Idempotency-Key failed and frees the key: send the request again',
        undefined,
        { 'Retry-After': '1' },
      );
    }
    await this.deps.taskStore.create(principal, recordsOf(launch.input, launch.origin), launch.input.compositionId, {
      again: true,
    });
    try {
      await this.startWorkflow(launch);
    } catch (error) {
      // Not started: the claim stays unconfirmed, and the next repeat tries again.
      if (!(await startedAnyway(this.deps.temporal, launch.workflowId, error, ids, true))) throw error;
    }
    await idempotency.confirm().catch(() => undefined);
    return ids;
  }

  private async startWorkflow({ workflowId, input }: StoredLaunch): Promise<void> {
    const [first] = input.tasks;
    await this.deps.temporal.client.workflow.start<typeof compositionWorkflow>('compositionWorkflow', {
      workflowId,
      taskQueue: this.deps.config.taskQueue,
      args: [input],
      // A launch finished by a repeat must not run again a workflow that already ended.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      // A composition is listed under its first task's agent and operation; staticDetails names them all.
      typedSearchAttributes: [
        { key: AGENT_ID_ATTRIBUTE, value: first.agentId },
        { key: OPERATION_ATTRIBUTE, value: first.operation },
      ],
      workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
      staticSummary: summaryOf(input),
      staticDetails: detailsOf(input),
      // Taken up only when this process runs the task worker (TemporalHandle); otherwise a normal start.
      requestEagerStart: true,
    });
  }
}

/** `forEach` with every option settled: the defaults of maxConcurrency and onItemFailure filled in. */
const mapPlanOf = ({ source, maxConcurrency, onItemFailure }: MapRequest): MapPlan => ({
  source,
  maxConcurrency: maxConcurrency ?? DEFAULT_MAP_CONCURRENCY,
  onItemFailure: onItemFailure ?? ItemFailurePolicy.FAIL,
});

/** Where a launch's tasks come from: a room, an A2A context, and the task they are started on behalf of. */
type LaunchOrigin = TaskOrigin & Partial<TaskLineage> & Pick<NewTask, 'contextId'>;

/** What a repeat needs to finish a launch (TaskLauncher.finish), stored with the idempotency claim. */
interface StoredLaunch {
  workflowId: string;
  input: CompositionInput;
  origin: LaunchOrigin;
}

/** The task store's records of a launch's tasks. */
function recordsOf(input: CompositionInput, origin: LaunchOrigin): NewTask[] {
  return input.tasks.map((task, position) => ({
    _id: task.taskId,
    agentId: task.agentId,
    operation: task.operation,
    params: task.params,
    ...(task.callbackUrl === undefined ? {} : { callbackUrl: task.callbackUrl }),
    phase: task.parents.length > 0 ? TaskPhase.WAITING_FOR_PARENTS : TaskPhase.CALLING_AGENT,
    ...origin,
    ...(input.compositionId === undefined
      ? {}
      : {
          compositionId: input.compositionId,
          index: position,
          ...(task.parents.length === 0 ? {} : { dependsOn: task.parents.map((parent) => input.tasks[parent].taskId) }),
        }),
  }));
}

/**
 * Whether the workflow of a start that failed runs all the same: the server may have started it
 * just before the start's deadline passed, and the client's retry of such a start is told that it
 * already runs. Workflow ids hold fresh UUIDs, so a workflow with ours is the one this launch
 * started. When Temporal cannot tell, a 503 whose details name the kept tasks: the caller sends the
 * request again (with its Idempotency-Key, the repeat answers the same ids) or looks them up.
 */
async function startedAnyway(
  temporal: Pick<TemporalHandle, 'client'>,
  workflowId: string,
  startError: unknown,
  ids: LaunchedIds,
  idempotent: boolean,
): Promise<boolean> {
  if (startError instanceof WorkflowExecutionAlreadyStartedError) return true;
  try {
    await temporal.client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    const advice = idempotent
      ? 'send the request again with the same Idempotency-Key'
      : 'look them up before sending the request again';
    const unknown = new UnavailableError(
      UnavailableReason.TEMPORAL,
      `Temporal failed to start workflow ${workflowId} and could not tell whether it started after all; its tasks are kept: ${advice}`,
      ids,
      { 'Retry-After': '1' },
    );
    // The error handler logs a 5xx with its causes: the start's failure says what went wrong.
    throw Object.assign(unknown, { cause: startError });
  }
}

function summaryOf({ compositionId, tasks }: CompositionInput): string {
  const named = tasks.map((task) => `${task.agentName}: ${task.operation}`);
  const summary = compositionId === undefined ? named[0] : `Composition of ${tasks.length}: ${named.join(', ')}`;
  return summary.length > SUMMARY_CHARS ? `${summary.slice(0, SUMMARY_CHARS - 1)}…` : summary;
}

function detailsOf({ tasks }: CompositionInput): string {
  return tasks
    .map((task, position) => {
      const after = task.parents.length > 0 ? `, after ${task.parents.join(', ')}` : '';
      return `- ${position}. ${task.agentName} (agent ${task.agentId}): ${task.operation}, task ${task.taskId}${after}`;
    })
    .join('\n');
}
