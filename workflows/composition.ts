// One workflow per composition; a single task is a composition of one. Tasks form a DAG through
// `parents`: each starts the moment its parents ended, independent ones run concurrently.
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RoomDeliveryActivities } from '../src/room-tasks/delivery-activities';
import type { CallAgentResult } from '../activities/call-agent';
import type { CallbackTarget } from '../activities/deliver-callback';
import { pendingArgumentsOf, substitute } from '../src/router/pending-arguments';
import {
  agentReportSignal,
  agentSocketLostSignal,
  cancelTaskUpdate,
  normaliseResult,
  TaskErrorCode,
  TaskPhase,
  TaskStatus,
  type AgentReport,
  type CompositionInput,
  type PlannedTask,
  type TaskCallback,
  type RoomOfTask,
  type TaskError,
  type TaskOutcome,
  type TaskResult,
} from '../src/router/task-types';

/** Index writes and schema checks: short, and retried until MongoDB answers again. */
const bookkeepingOptions = {
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
} as const;

/**
 * Run by the worker within the workflow task, without a round trip through the server of their own:
 * the bookkeeping, and the agent call with its task's own timeout and retry policy.
 */
const localActivities = proxyLocalActivities<Activities>(bookkeepingOptions);

/** Telling an agent of a cancellation: a few quick tries, then the task is cancelled all the same. */
const notificationOptions = {
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, initialInterval: '1 second', backoffCoefficient: 2 },
} as const;
const notifications = proxyActivities<Activities>(notificationOptions);

/**
 * Work on the room sockets of one API process, on that process's own queue. A process that died
 * leaves its queue unpolled: the schedule-to-close bound ends the wait and HTTP takes over.
 */
const roomDeliveryOptions = {
  scheduleToCloseTimeout: '5 seconds',
  retry: { maximumAttempts: 2, initialInterval: '200 milliseconds' },
} as const;
const roomDeliveryAt = (taskQueue: string) => proxyActivities<RoomDeliveryActivities>({ ...roomDeliveryOptions, taskQueue });

/** Completion callbacks: retried with backoff for about ten minutes, then given up (the task's outcome stands). */
const callbackOptions = {
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 12, initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '2 minutes' },
} as const;
const callbacks = proxyActivities<Activities>(callbackOptions);

/**
 * Patch id (workflow versioning): a dependant that cannot run fails as soon as one parent failed or
 * was cancelled, instead of once all its parents ended. Runs recorded before it keep the old wait.
 */
const FAIL_AT_FIRST_FAILED_PARENT = 'dependant-fails-at-first-failed-parent';

/** Margin of the activity's own timeout over the HTTP call's, for loading the agent and recording. */
const CALL_ACTIVITY_MARGIN_MS = 10_000;

/** What the workflow's handlers and its tasks share. */
interface WorkflowState {
  /** Kept even when one arrives before the call returned 202, so a fast agent's report is not lost. */
  reports: Map<string, AgentReport>;
  /** Tasks whose agent left the room before answering the TASK frame. */
  socketsLost: Set<string>;
  /** Tasks whose agent took the task and owes a report: told when they are cancelled. */
  awaitingReport: Set<string>;
  /** Tasks whose outcome their call already recorded in the index. */
  recordedByCall: Set<string>;
  /** The scope of each task whose agent call is running: a report ends the call by cancelling it. */
  callsInFlight: Map<string, CancellationScope>;
  /** Tasks whose result the workflow holds itself, rather than leaving it in the index. */
  resultsKept: Set<string>;
}

/**
 * The tasks whose result the workflow needs: a dependant's pending argument reads it, or a room's
 * task_update carries it. The others' results stay out of the history (CallAgentResult).
 */
function resultsTheWorkflowNeeds(tasks: PlannedTask[]): Set<string> {
  const needed = new Set(tasks.filter((task) => task.room !== undefined).map((task) => task.taskId));
  for (const task of tasks) {
    for (const [, argument] of pendingArgumentsOf(task.params)) needed.add(tasks[Number(argument.source.taskId)].taskId);
  }
  return needed;
}

export interface CompositionSummary {
  tasks: Array<{ taskId: string; status: TaskStatus }>;
}

export async function compositionWorkflow(input: CompositionInput): Promise<CompositionSummary> {
  const state: WorkflowState = { reports: new Map(), socketsLost: new Set(), awaitingReport: new Set(), recordedByCall: new Set(), callsInFlight: new Map(), resultsKept: resultsTheWorkflowNeeds(input.tasks) };
  const { reports, awaitingReport } = state;
  setHandler(agentReportSignal, (report) => {
    if (reports.has(report.taskId)) return;
    reports.set(report.taskId, report);
    // An agent may report (POST /tasks/{taskId}/result) while its call is still being retried, say
    // after a reply lost on the way back: the report ends the task, and the call with it.
    state.callsInFlight.get(report.taskId)?.cancel();
  });
  setHandler(agentSocketLostSignal, (taskId) => void state.socketsLost.add(taskId));

  const outcomes: Array<TaskOutcome | undefined> = input.tasks.map(() => undefined);
  const recorded = input.tasks.map(() => false);
  // Each task runs in a scope of its own, so cancelling one leaves its siblings running.
  const scopes = input.tasks.map(() => new CancellationScope());
  const cancelRequested = new Set<number>();
  const deliveries: Array<Promise<void>> = [];

  setHandler(
    cancelTaskUpdate,
    async (taskId) => {
      const position = input.tasks.findIndex((task) => task.taskId === taskId);
      if (outcomes[position] === undefined) {
        cancelRequested.add(position);
        scopes[position].cancel();
      }
      await condition(() => recorded[position]);
      return outcomes[position]!.status;
    },
    {
      validator: (taskId) => {
        if (!input.tasks.some((task) => task.taskId === taskId)) throw new Error(`Task ${taskId} is not part of this workflow`);
      },
    },
  );

  // Cancelling the whole workflow (an operator, in the Temporal Web UI or CLI) cancels every task still
  // running. Each end is recorded and told shielded from it: the cancel may come while a record runs,
  // and the root scope refuses new activities once it came.
  const root = CancellationScope.current();

  async function runTask(task: PlannedTask, position: number): Promise<void> {
    let outcome: TaskOutcome | undefined;
    try {
      outcome = await scopes[position].run(() => execute(task, input, outcomes, state));
    } catch (error) {
      if (!isCancellation(error)) throw error;
    }
    // A cancellation wins over any outcome not yet recorded, even one its scope produced meanwhile;
    // the agent's answer its call recorded before hearing of the cancellation stands.
    const recordedByCall = state.recordedByCall.has(task.taskId);
    const ended: TaskOutcome = (cancelRequested.has(position) && !recordedByCall) || outcome === undefined ? { status: TaskStatus.CANCELLED } : outcome;
    // Children may start before the index is written: they only read the outcome held here.
    outcomes[position] = ended;
    await CancellationScope.nonCancellable(() => concludeTask(task, position, ended, recordedByCall));
  }

  /** Records the task's end (unless its call did), then tells whoever waits for it. */
  async function concludeTask(task: PlannedTask, position: number, outcome: TaskOutcome, recordedByCall: boolean): Promise<void> {
    if (!recordedByCall) {
      await localActivities.recordTask.executeWithOptions(
        { ...bookkeepingOptions, summary: `record ${outcome.status}: ${describeTask(task)}` },
        [task.taskId, outcome],
      );
    }
    recorded[position] = true;
    // After the record: neither an unreachable agent nor a slow callback receiver delays the outcome.
    if (outcome.status === TaskStatus.CANCELLED && awaitingReport.has(task.taskId)) {
      deliveries.push(
        notifications.notifyCancellation
          .executeWithOptions({ ...notificationOptions, summary: `tell of cancellation: ${describeTask(task)}` }, [{ taskId: task.taskId, agentId: task.agentId }])
          .catch(() => undefined),
      );
    }
    deliveries.push(...deliverCallbacks(task, outcome, recordedByCall && outcome.result === undefined && outcome.error === undefined));
    if (task.room) await announceInRoom(task, task.room, outcome);
  }

  // Every promise a workflow creates costs a captured stack (the SDK's stack-trace query): none is
  // spent on a Promise.all of one task, the usual workflow, or of no deliveries.
  await (input.tasks.length === 1 ? runTask(input.tasks[0], 0) : Promise.all(input.tasks.map(runTask)));
  if (deliveries.length > 0) await Promise.all(deliveries);
  // Shown as Canceled in the Web UI, like the tasks it cut short.
  if (root.consideredCancelled) throw new CancelledFailure('Workflow cancelled: its tasks still running were cancelled');
  return { tasks: input.tasks.map((task, position) => ({ taskId: task.taskId, status: outcomes[position]!.status })) };
}

/**
 * The task's and its agent's completion callbacks, each settled whether delivered or given up.
 * `outcomeInIndex`: the call left the result or error in the index only, where the activity reads it.
 */
function deliverCallbacks(task: PlannedTask, outcome: TaskOutcome, outcomeInIndex: boolean): Array<Promise<void>> {
  const callback: TaskCallback = {
    taskId: task.taskId,
    status: outcome.status,
    ...(outcome.result === undefined ? {} : { result: outcome.result }),
    ...(outcome.error === undefined ? {} : { error: outcome.error }),
    agentId: task.agentId,
    operation: task.operation,
    completedAt: new Date().toISOString(),
  };
  const targets: CallbackTarget[] = [
    ...(task.callbackUrl === undefined ? [] : [{ kind: 'task' as const, url: task.callbackUrl }]),
    ...(task.notifyAgent ? [{ kind: 'agent' as const, agentId: task.agentId }] : []),
  ];
  return targets.map((target) =>
    callbacks.deliverCallback
      .executeWithOptions({ ...callbackOptions, summary: `callback to ${target.kind}: ${describeTask(task)}` }, outcomeInIndex ? [target, callback, true] : [target, callback])
      .catch(() => undefined),
  );
}

const describeTask = (task: PlannedTask): string => `${task.agentName}: ${task.operation}`;

/** The TASK frame over the agent's socket to the room, when some API process holds one; false otherwise. */
async function deliverInRoom(task: PlannedTask, room: RoomOfTask, params: Record<string, unknown>): Promise<boolean> {
  const queue = await localActivities.findAgentSocket.executeWithOptions({ ...bookkeepingOptions, summary: `find agent socket: ${describeTask(task)}` }, [
    { roomId: room.roomId, agentId: task.agentId },
  ]);
  if (queue === null) return false;
  try {
    return await roomDeliveryAt(queue).deliverTaskFrame.executeWithOptions(
      { ...roomDeliveryOptions, taskQueue: queue, summary: `TASK frame: ${describeTask(task)}` },
      [{ taskId: task.taskId, agentId: task.agentId, operation: task.operation, params, roomId: room.roomId, requestedBy: room.requestedBy, workflowId: workflowInfo().workflowId }],
    );
  } catch (error) {
    if (isCancellation(error)) throw error;
    return false;
  }
}

/** The task_update SYSTEM frame, to every API process with sockets to the room; a process gone misses it. */
async function announceInRoom(task: PlannedTask, room: RoomOfTask, outcome: TaskOutcome): Promise<void> {
  const queues = await localActivities.findRoomSockets.executeWithOptions({ ...bookkeepingOptions, summary: `find room sockets: ${describeTask(task)}` }, [room.roomId]);
  await Promise.all(
    queues.map((queue) =>
      roomDeliveryAt(queue)
        .publishTaskUpdate.executeWithOptions(
          { ...roomDeliveryOptions, taskQueue: queue, summary: `task_update: ${describeTask(task)}` },
          [{ roomId: room.roomId, taskId: task.taskId, agentId: task.agentId, outcome }],
        )
        .catch(() => undefined),
    ),
  );
}

const failure = (error: TaskError, attempts?: number): TaskOutcome => ({ status: TaskStatus.FAILED, error, ...(attempts === undefined ? {} : { attempts }) });

/**
 * Runs one task in its own scope, once its parents ended. Written for few promises: the SDK captures
 * a source-mapped stack for each one a workflow creates, and a task of one agent call is most of
 * what this service runs.
 */
async function execute(task: PlannedTask, input: CompositionInput, outcomes: Array<TaskOutcome | undefined>, state: WorkflowState): Promise<TaskOutcome> {
  const { reports, socketsLost, awaitingReport } = state;
  let params = task.params;
  if (task.parents.length > 0) {
    const endedUncompleted = (parent: number) => outcomes[parent] !== undefined && outcomes[parent]!.status !== TaskStatus.COMPLETED;
    const failsEarly = !task.executeOnParentFailure && patched(FAIL_AT_FIRST_FAILED_PARENT);
    await condition(() => task.parents.every((parent) => outcomes[parent] !== undefined) || (failsEarly && task.parents.some(endedUncompleted)));
    const failedParent = task.parents.find(endedUncompleted);
    if (failedParent !== undefined && !task.executeOnParentFailure) {
      return failure({ code: TaskErrorCode.DEPENDENCY_FAILED, message: `Parent task ${failedParent} (${input.tasks[failedParent].taskId}) ${outcomes[failedParent]!.status}` });
    }
  }
  const startedAt = Date.now();
  if (pendingArgumentsOf(params).length > 0) {
    const parentResults: Array<TaskResult | undefined> = outcomes.map((outcome) => (outcome?.status === TaskStatus.COMPLETED ? outcome.result : undefined));
    const substitution = substitute(params, parentResults);
    if ('error' in substitution) return failure(substitution.error);
    try {
      params = await localActivities.validateParams.executeWithOptions({ ...bookkeepingOptions, summary: `check params: ${describeTask(task)}` }, [
        { agentId: task.agentId, operation: task.operation, params: substitution.params },
      ]);
    } catch (error) {
      return failure(activityError(error));
    }
  }

  if (task.parents.length > 0) {
    await localActivities.recordTask.executeWithOptions({ ...bookkeepingOptions, summary: `calling: ${describeTask(task)}` }, [task.taskId, { phase: TaskPhase.CALLING_AGENT }]);
  }
  if (task.room && (await deliverInRoom(task, task.room, params))) {
    awaitingReport.add(task.taskId);
    const remainingMs = task.timeoutMs - (Date.now() - startedAt);
    const ended = remainingMs > 0 && (await condition(() => reports.has(task.taskId) || socketsLost.has(task.taskId), remainingMs));
    if (reports.has(task.taskId)) return outcomeOfReport(reports.get(task.taskId)!, 1);
    if (!ended) return failure({ code: TaskErrorCode.AGENT_TIMEOUT, message: `Agent got the task over its room socket but answered nothing within ${task.timeoutMs} ms` });
    awaitingReport.delete(task.taskId);
  }
  // A local activity, with its retries: Temporal records only its outcome. Signals and updates that
  // arrive meanwhile wait until the worker renews the workflow task (WORKFLOW_TASK_TIMEOUT in
  // src/router/task-launcher.ts); a report or a cancellation of the task then cancels the call
  // through this task's scope. Nothing is decided before the attempt ended, so an answer it
  // recorded in the index is never overwritten.
  if (reports.has(task.taskId)) return outcomeOfReport(reports.get(task.taskId)!);
  let replied: CallAgentResult;
  state.callsInFlight.set(task.taskId, CancellationScope.current());
  try {
    replied = await localActivities.callAgent.executeWithOptions(
      {
        summary: describeTask(task),
        startToCloseTimeout: input.agentCallTimeoutMs + CALL_ACTIVITY_MARGIN_MS,
        cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        retry: {
          maximumAttempts: task.retry.maxAttempts,
          initialInterval: task.retry.initialIntervalMs,
          backoffCoefficient: task.retry.backoffCoefficient,
          maximumInterval: task.retry.maxIntervalMs,
        },
      },
      [{ taskId: task.taskId, agentId: task.agentId, operation: task.operation, params, maxAttempts: task.retry.maxAttempts, keepsResult: state.resultsKept.has(task.taskId) }],
    );
  } catch (error) {
    if (reports.has(task.taskId)) return outcomeOfReport(reports.get(task.taskId)!);
    // A cancellation: runTask records it. Otherwise the activity recorded its attempts in the index itself.
    if (isCancellation(error)) throw error;
    return failure(activityError(error));
  } finally {
    state.callsInFlight.delete(task.taskId);
  }
  if (replied.kind !== 'accepted' && replied.recorded) return answerRecordedByCall(task.taskId, replied, state);
  // A report that came while the call ran: its outcome, with the attempts the call made.
  if (reports.has(task.taskId)) return outcomeOfReport(reports.get(task.taskId)!, replied.attempt);
  if (replied.kind !== 'accepted') return outcomeOfAnswer(replied);

  awaitingReport.add(task.taskId);
  const remainingMs = task.timeoutMs - (Date.now() - startedAt);
  const reported = remainingMs > 0 && (await condition(() => reports.has(task.taskId), remainingMs));
  if (!reported) {
    return failure({ code: TaskErrorCode.AGENT_TIMEOUT, message: `Agent accepted the task but reported no outcome within ${task.timeoutMs} ms` }, replied.attempt);
  }
  return outcomeOfReport(reports.get(task.taskId)!, replied.attempt);
}

type AgentAnswer = Exclude<CallAgentResult, { kind: 'accepted' }>;

/** Without result or error when the call left them in the index only (CallAgentResult). */
const outcomeOfAnswer = (answer: AgentAnswer): TaskOutcome => ({
  status: answer.kind === 'completed' ? TaskStatus.COMPLETED : TaskStatus.FAILED,
  ...(answer.kind === 'completed' && answer.result !== undefined ? { result: answer.result } : {}),
  ...(answer.kind === 'failed' && answer.error !== undefined ? { error: answer.error } : {}),
  attempts: answer.attempt,
});

/** The agent's answer its call already recorded in the index: it stands, and runTask does not record it again. */
function answerRecordedByCall(taskId: string, answer: AgentAnswer, state: WorkflowState): TaskOutcome {
  state.recordedByCall.add(taskId);
  return outcomeOfAnswer(answer);
}

function outcomeOfReport(report: AgentReport, attempts?: number): TaskOutcome {
  return report.status === TaskStatus.COMPLETED
    ? { status: TaskStatus.COMPLETED, result: normaliseResult(report.result), ...(attempts === undefined ? {} : { attempts }) }
    : failure(report.error ?? { message: 'Agent reported failure' }, attempts);
}

/**
 * The task error for a failed local activity (its failure arrives as it was thrown, or wrapped in
 * an ActivityFailure): a non-retryable failure carries its code as type and the detail as first
 * detail; a retryable one or a timeout, once the retries are used up, means the agent was unreachable.
 */
function activityError(error: unknown): TaskError {
  const cause = error instanceof ActivityFailure && error.cause ? error.cause : error;
  if (cause instanceof ApplicationFailure && cause.nonRetryable && cause.type) {
    return { code: cause.type, message: cause.message, ...(cause.details?.length ? { details: cause.details[0] } : {}) };
  }
  if (!(cause instanceof ApplicationFailure || cause instanceof TimeoutFailure)) throw error;
  return { code: TaskErrorCode.AGENT_UNREACHABLE, message: `Agent unreachable after its retries: ${cause.message}` };
}
