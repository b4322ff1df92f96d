// One task of a composition, from its parents to its recorded outcome. Its state lives here; its
// life is a sequence of named steps (execute()): parents ended, arguments substituted, params
// checked, TASK frame delivered in the room, agent called, report arrived, then conclude().
import {
  ActivityCancellationType,
  CancellationScope,
  condition,
  isCancellation,
  patched,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { A2aTaskPoll, CallAgentResult, CallbackTarget, McpTaskPoll, PolledTask } from './activity-contract';
import {
  TaskErrorCode,
  TaskPhase,
  TaskStatus,
  TaskWait,
  type AgentReport,
  type CompositionInput,
  type A2aTaskHandle,
  type McpTaskHandle,
  type PlannedTask,
  type RoomOfTask,
  type InputAnswerNotice,
  type InputRequestNotice,
  type TaskCallback,
  type TaskOutcome,
  type TaskProgress,
  type TaskUpdate,
} from './task-types';
import {
  agentCalls,
  bookkeeping,
  bookkeepingOptions,
  CALL_ACTIVITY_MARGIN_MS,
  CALL_HEARTBEAT_TIMEOUT,
  callbackOptions,
  callbacks,
  inputDeliveries,
  inputDeliveryOptions,
  notificationOptions,
  notifications,
  roomDeliveryAt,
  roomDeliveryOptions,
} from './activity-stubs';
import { activityError, failure, outcomeOfAnswer, outcomeOfReport } from './outcomes';
import { pendingArgumentsOf, substitute, usesPointers } from './pending-arguments';
import { FAIL_AT_FIRST_FAILED_PARENT, INPUT_REQUESTS, PENDING_ARGUMENT_POINTERS } from './versions';

/** What a task needs of the run it belongs to. */
export interface RunOfTask {
  readonly input: CompositionInput;
  readonly tasks: readonly TaskRun[];
  /** The run took the VISIBLE_AGENT_CALLS patch: regular call activity, named timers. */
  readonly visibleCalls: boolean;
  /** Callbacks, notices and room frames, settled before the workflow returns. */
  readonly deliveries: Array<Promise<void>>;
  /** A task's state changed: the run's current details are drawn again. */
  changed(): void;
}

type Params = Record<string, unknown>;

/** The task's retry settings as Temporal's retry policy: its calls and polls are retried by it. */
const retryPolicyOf = ({ retry }: PlannedTask) => ({
  maximumAttempts: retry.maxAttempts,
  initialInterval: retry.initialIntervalMs,
  backoffCoefficient: retry.backoffCoefficient,
  maximumInterval: retry.maxIntervalMs,
});

/**
 * Between polls of an agent's own task (an MCP task, an A2A task): the agent's suggestion, but
 * never under a twelfth of the time the task has run, within 1 s and 60 s. Each poll adds about a
 * dozen events to the run's history, which Temporal caps at 51 200: polls that slow down as the
 * task ages let a task run for days, where a steady 5 s would end the run within hours. An MCP
 * server that suggests nothing is polled every 5 s; an A2A agent, which has no way to suggest, every
 * second at first.
 */
const MCP_TASK_POLL_DEFAULT_MS = 5_000;
const AGENT_TASK_POLL_MIN_MS = 1_000;
const AGENT_TASK_POLL_MAX_MS = 60_000;
const AGENT_TASK_POLL_AGE_SHARE = 12;
const agentTaskPollDelayMs = (suggestedMs: number, elapsedMs: number): number =>
  Math.min(
    AGENT_TASK_POLL_MAX_MS,
    Math.max(AGENT_TASK_POLL_MIN_MS, suggestedMs, Math.floor(elapsedMs / AGENT_TASK_POLL_AGE_SHARE)),
  );

/** A task the agent goes on with on its side, and how the workflow polls it. */
interface FollowedTask {
  /** What it is, in the poll activity's summary: `MCP task`, `A2A task`. */
  kind: string;
  /** It, in messages and timer summaries: `MCP task <its id>`. */
  name: string;
  wait: TaskWait;
  /** The agent's suggestion of the wait before the first poll, if it made one. */
  firstIntervalMs?: number;
  /** The wait between polls while the agent suggests none. */
  unsuggestedMs: number;
  /** One poll: the activity, with the task it is for. */
  poll: (options: ActivityOptions, polled: PolledTask) => Promise<McpTaskPoll | A2aTaskPoll>;
}

const endedUncompleted = (parent: TaskRun): boolean =>
  parent.outcome !== undefined && parent.outcome.status !== TaskStatus.COMPLETED;

export class TaskRun {
  /** Set once the task ended, before it is recorded: dependants read it. */
  outcome?: TaskOutcome;
  /** The outcome is in the task store: a cancellation's update may answer. */
  outcomeStored = false;
  /** Kept even when it arrives before the call returned 202, so a fast agent's report is not lost. */
  private report?: AgentReport;
  /** The agent left the room before answering the TASK frame. */
  private socketLost = false;
  /** The agent took the task and owes a report: told when the task is cancelled. */
  private awaitingReport = false;
  /** The MCP task the agent runs for this one: cancelled at the agent when this task ends without its answer. */
  private mcpTask?: McpTaskHandle;
  /** The A2A task the agent goes on with for this one: cancelled at the agent when this task ends without its answer. */
  private a2aTask?: A2aTaskHandle;
  /** The call already recorded the agent's answer in the task store. */
  private answerStoredByCall = false;
  private cancelRequested = false;
  private attempts?: number;
  private waitingFor?: TaskWait;
  /** Cancelling one task leaves its siblings running. */
  private readonly scope = new CancellationScope();
  /** The agent's latest input request (inputRequested signal). */
  private inputRequest?: InputRequestNotice;
  /** The request the task last took up: a later one is open again. */
  private takenUpRequest?: string;
  /** Requests answered (inputAnswered signal), kept even when the answer's signal overtook the request's. */
  private readonly answeredRequests = new Set<string>();
  /** Set while the agent call runs: a report ends the call by cancelling it. */
  private callScope?: CancellationScope;

  constructor(
    readonly task: PlannedTask,
    readonly position: number,
    private readonly run: RunOfTask,
    /** A dependant's pending argument reads the result, or a room's task_update carries it. */
    private readonly keepsResult: boolean,
  ) {
    this.waitingFor = task.parents.length > 0 ? TaskWait.PARENTS : TaskWait.AGENT_CALL;
  }

  /** The agent's report (`agentReport` signal); the first one counts. */
  reported(report: AgentReport): void {
    if (this.report) return;
    this.report = report;
    // An agent may report while its call is still being retried, say after a reply lost on the way
    // back: the report ends the task, and the call with it.
    this.callScope?.cancel();
  }

  /** The agent asks for a person's input; ignored once the task ended. */
  inputRequested(request: InputRequestNotice): void {
    if (this.outcome === undefined) this.inputRequest = request;
  }

  /** A person answered an input request; the API stored the input. */
  inputAnswered({ requestId }: InputAnswerNotice): void {
    this.answeredRequests.add(requestId);
  }

  /** The agent's socket that got the TASK frame closed before it answered. */
  socketClosed(): void {
    this.socketLost = true;
  }

  /** `POST /tasks/{taskId}/cancel`: answers the status the task ended with, once recorded. */
  async cancel(): Promise<TaskStatus> {
    if (this.outcome === undefined) {
      this.cancelRequested = true;
      this.scope.cancel();
    }
    await condition(() => this.outcomeStored);
    return this.outcome!.status;
  }

  progress(): TaskProgress {
    const { taskId, agentId, agentName, operation } = this.task;
    return {
      position: this.position,
      taskId,
      agentId,
      agentName,
      operation,
      // As the task store and its event log have it: input-required while a person's input is awaited.
      status: this.outcomeStored
        ? this.outcome!.status
        : this.waitingFor === TaskWait.INPUT
          ? TaskStatus.INPUT_REQUIRED
          : TaskStatus.PENDING,
      ...(this.attempts === undefined ? {} : { attempts: this.attempts }),
      ...(this.waitingFor === undefined ? {} : { waitingFor: this.waitingFor }),
    };
  }

  /** The task's whole life; a cancellation (of the task or the workflow) ends it `cancelled`. */
  async live(): Promise<void> {
    let outcome: TaskOutcome | undefined;
    try {
      outcome = await this.scope.run(() => this.execute());
    } catch (error) {
      if (!isCancellation(error)) throw error;
    }
    // A cancellation wins over any outcome not yet recorded, even one its scope produced meanwhile;
    // the agent's answer its call recorded before hearing of the cancellation stands.
    const ended: TaskOutcome =
      (this.cancelRequested && !this.answerStoredByCall) || outcome === undefined
        ? { status: TaskStatus.CANCELLED }
        : outcome;
    // Dependants may start before the task store is written: they only read the outcome held here.
    this.outcome = ended;
    if (ended.attempts !== undefined) this.attempts = ended.attempts;
    this.waitFor(TaskWait.RECORD);
    // Shielded from a workflow cancel that may come while the record runs: the root scope refuses
    // new activities once it came.
    await CancellationScope.nonCancellable(() => this.conclude(ended));
  }

  /**
   * The task's steps, in order. A report can come at any point of a task's life and wins over what
   * has not ended yet, so each step that ends looks for one first.
   *
   * Each step's wait is awaited here, directly: when several waits end in one activation (as the
   * local activities of one workflow task do on replay), the order in which tasks schedule their
   * next commands follows the order of those ends only if every path takes as many microtask turns,
   * and a run whose order changed would no longer replay.
   */
  private async execute(): Promise<TaskOutcome> {
    let params = this.task.params;
    if (this.task.parents.length > 0) {
      await this.parentsEnded();
      const parentFailure = this.parentFailure();
      if (parentFailure) return parentFailure;
    }
    const startedAt = Date.now();
    if (pendingArgumentsOf(params).length > 0) {
      const substitution = this.substituteArguments();
      if ('error' in substitution) return failure(substitution.error);
      try {
        params = await this.checkParams(substitution.params);
      } catch (error) {
        return failure(activityError(error));
      }
    }
    if (this.task.parents.length > 0) await this.recordCallingPhase();

    if (this.task.room && (await this.deliverInRoom(this.task.room, params))) {
      this.awaitingReport = true;
      let ended = await this.reportOrSocketLost(startedAt);
      // Awaited only when the agent asked for input: a run without requests keeps its order of awaits.
      for (let request = this.openRequest(); ended && request && !this.report && !this.socketLost;) {
        const failed = await this.inputTaken(request, startedAt, 1);
        if (failed) return failed;
        ended = await this.reportOrSocketLost(startedAt);
        request = this.openRequest();
      }
      if (this.report) return outcomeOfReport(this.report, 1);
      if (!ended)
        return failure({
          code: TaskErrorCode.AGENT_TIMEOUT,
          message: `Agent got the task over its room socket but answered nothing within ${this.task.timeoutMs} ms`,
        });
      // An agent that asked for input has the task: with its socket gone it reports over HTTP, and
      // is not called with the task again (the answer went to its mcpUrl).
      if (this.takenUpRequest !== undefined) return this.reportOverHttp(startedAt);
      this.awaitingReport = false;
    }

    if (this.report) return outcomeOfReport(this.report);
    let replied: CallAgentResult;
    this.callScope = CancellationScope.current();
    try {
      replied = await this.callAgent(params);
    } catch (error) {
      if (this.report) return outcomeOfReport(this.report);
      // A cancellation: live() records it. Otherwise the activity recorded its attempts in the task store itself.
      if (isCancellation(error)) throw error;
      return failure(activityError(error));
    } finally {
      this.callScope = undefined;
    }
    this.attempts = replied.attempt;
    if (replied.kind === 'mcpTask') return this.mcpTaskEnded(replied.handle, replied.attempt, startedAt);
    if (replied.kind === 'a2aTask') return this.a2aTaskEnded(replied.handle, replied.attempt, startedAt);
    if (replied.kind !== 'accepted' && replied.recorded) {
      this.answerStoredByCall = true;
      return outcomeOfAnswer(replied);
    }
    // A report that came while the call ran: its outcome, with the attempts the call made.
    if (this.report) return outcomeOfReport(this.report, replied.attempt);
    if (replied.kind !== 'accepted') return outcomeOfAnswer(replied);

    this.awaitingReport = true;
    let arrived = await this.reportArrived(startedAt);
    // Awaited only when the agent asked for input: a run without requests keeps its order of awaits.
    for (let request = this.openRequest(); arrived && request && !this.report;) {
      const failed = await this.inputTaken(request, startedAt, replied.attempt);
      if (failed) return failed;
      arrived = await this.reportArrived(startedAt);
      request = this.openRequest();
    }
    if (!arrived) {
      return failure(
        {
          code: TaskErrorCode.AGENT_TIMEOUT,
          message: `Agent accepted the task but reported no outcome within ${this.task.timeoutMs} ms`,
        },
        replied.attempt,
      );
    }
    return outcomeOfReport(this.report!, replied.attempt);
  }

  /** Step: every parent ended, or (FAIL_AT_FIRST_FAILED_PARENT) one failed and this task cannot run. */
  private parentsEnded(): Promise<void> {
    const failsEarly = !this.task.executeOnParentFailure && patched(FAIL_AT_FIRST_FAILED_PARENT);
    this.waitFor(TaskWait.PARENTS);
    return condition(
      () =>
        this.parentRuns().every((parent) => parent.outcome !== undefined) ||
        (failsEarly && this.parentRuns().some(endedUncompleted)),
    );
  }

  /** DEPENDENCY_FAILED when a parent failed or was cancelled, unless the task runs on a parent's failure. */
  private parentFailure(): TaskOutcome | undefined {
    const failed = this.parentRuns().find(endedUncompleted);
    if (failed === undefined || this.task.executeOnParentFailure) return undefined;
    return failure({
      code: TaskErrorCode.DEPENDENCY_FAILED,
      message: `Parent task ${failed.position} (${failed.task.taskId}) ${failed.outcome!.status}`,
    });
  }

  private parentRuns(): TaskRun[] {
    return this.task.parents.map((parent) => this.run.tasks[parent]);
  }

  /** Step: pending arguments filled in from the parents' results. */
  private substituteArguments() {
    return substitute(
      this.task.params,
      this.run.tasks.map(({ outcome }) => (outcome?.status === TaskStatus.COMPLETED ? outcome.result : undefined)),
      usesPointers(this.task.params) && patched(PENDING_ARGUMENT_POINTERS),
    );
  }

  /** Step: the substituted params checked against the inputSchema, with its defaults filled in. */
  private checkParams(params: Params): Promise<Params> {
    this.waitFor(TaskWait.PARAMS_CHECK);
    return bookkeeping.validateParams.executeWithOptions(
      { ...bookkeepingOptions, summary: `check params: ${this.describe()}` },
      [{ agentId: this.task.agentId, operation: this.task.operation, params }],
    );
  }

  /** A dependant's phase moves from waiting_for_parents to calling_agent (a task without parents starts there). */
  private recordCallingPhase(): Promise<void> {
    return bookkeeping.recordTask.executeWithOptions(
      { ...bookkeepingOptions, summary: `calling: ${this.describe()}` },
      [this.ref(), { phase: TaskPhase.CALLING_AGENT }],
    );
  }

  /** Step: the TASK frame over the agent's socket, when some API process holds one; false otherwise. */
  private async deliverInRoom(room: RoomOfTask, params: Params): Promise<boolean> {
    const { taskId, agentId, operation } = this.task;
    this.waitFor(TaskWait.ROOM_SOCKET);
    const queue = await bookkeeping.findAgentSocket.executeWithOptions(
      { ...bookkeepingOptions, summary: `find agent socket: ${this.describe()}` },
      [{ roomId: room.roomId, agentId }],
    );
    if (queue === null) return false;
    try {
      return await roomDeliveryAt(queue).deliverTaskFrame.executeWithOptions(
        { ...roomDeliveryOptions, taskQueue: queue, summary: `TASK frame: ${this.describe()}` },
        [
          {
            taskId,
            agentId,
            operation,
            params,
            roomId: room.roomId,
            requestedBy: room.requestedBy,
            workflowId: workflowInfo().workflowId,
          },
        ],
      );
    } catch (error) {
      if (isCancellation(error)) throw error;
      return false;
    }
  }

  /** Step: the agent's answer over its room socket, or its input request; false at the task's timeout. */
  private reportOrSocketLost(startedAt: number): Promise<boolean> {
    return this.waitForAgent(
      () => this.report !== undefined || this.socketLost || this.openRequest() !== undefined,
      startedAt,
    );
  }

  /**
   * Step: the call with its retries. Nothing is decided before an attempt ended
   * (WAIT_CANCELLATION_COMPLETED: it hears of a cancellation through its heartbeats), so an answer
   * it recorded in the task store is never overwritten.
   */
  private callAgent(params: Params): Promise<CallAgentResult> {
    const { task } = this;
    this.waitFor(TaskWait.AGENT_CALL);
    const options = {
      startToCloseTimeout: this.run.input.agentCallTimeoutMs + CALL_ACTIVITY_MARGIN_MS,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: retryPolicyOf(task),
    };
    const input = {
      taskId: task.taskId,
      agentId: task.agentId,
      operation: task.operation,
      params,
      maxAttempts: task.retry.maxAttempts,
      keepsResult: this.keepsResult,
    };
    if (this.run.visibleCalls) {
      const { runId, firstExecutionRunId } = workflowInfo();
      return agentCalls.callAgent.executeWithOptions(
        { ...options, heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT, summary: `${this.describe()} (task ${task.taskId})` },
        [{ ...input, firstRun: runId === firstExecutionRunId }],
      );
    }
    // Runs started before VISIBLE_AGENT_CALLS make the call as a local activity.
    return bookkeeping.callAgent.executeWithOptions({ ...options, summary: this.describe() }, [input]);
  }

  /**
   * Step, after an MCP agent took the task as an MCP task of its own, or an A2A agent answered with
   * a task it goes on with: polled with named timers until it ends, or until the task's timeoutMs
   * has passed. Runs recorded before such agents existed never get here (no call of theirs answers
   * `mcpTask` or `a2aTask`), so the step needs no patch to replay them.
   */
  private async agentTaskEnded(followed: FollowedTask, attempt: number, startedAt: number): Promise<TaskOutcome> {
    const { task } = this;
    this.awaitingReport = true;
    let intervalMs = followed.firstIntervalMs;
    for (;;) {
      const remainingMs = task.timeoutMs - (Date.now() - startedAt);
      if (remainingMs <= 0) {
        return failure(
          {
            code: TaskErrorCode.AGENT_TIMEOUT,
            message: `The agent's ${followed.name} did not end within ${task.timeoutMs} ms`,
          },
          attempt,
        );
      }
      this.waitFor(followed.wait);
      // An agent may also report on the task (POST /tasks/{taskId}/result): its report ends the wait and the task.
      await condition(
        () => this.report !== undefined,
        Math.min(agentTaskPollDelayMs(intervalMs ?? followed.unsuggestedMs, Date.now() - startedAt), remainingMs),
        { summary: `next poll of ${followed.name} (task ${task.taskId})` },
      );
      if (this.report) return outcomeOfReport(this.report, attempt);
      let polled: McpTaskPoll | A2aTaskPoll;
      try {
        polled = await followed.poll(
          {
            startToCloseTimeout: this.run.input.agentCallTimeoutMs + CALL_ACTIVITY_MARGIN_MS,
            retry: retryPolicyOf(task),
            summary: `poll ${followed.kind}: ${this.describe()} (task ${task.taskId})`,
          },
          { taskId: task.taskId, agentId: task.agentId, attempt, keepsResult: this.keepsResult },
        );
      } catch (error) {
        if (isCancellation(error)) throw error;
        return failure(activityError(error), attempt);
      }
      if (polled.kind === 'working') {
        intervalMs = 'pollIntervalMs' in polled ? polled.pollIntervalMs : undefined;
        continue;
      }
      this.awaitingReport = false;
      if (polled.recorded) this.answerStoredByCall = true;
      return outcomeOfAnswer(polled);
    }
  }

  /** The MCP task an MCP agent runs for this one, polled with `tasks/get` at the pace the server suggests. */
  private mcpTaskEnded(handle: McpTaskHandle, attempt: number, startedAt: number): Promise<TaskOutcome> {
    this.mcpTask = handle;
    return this.agentTaskEnded(
      {
        kind: 'MCP task',
        name: `MCP task ${handle.mcpTaskId}`,
        wait: TaskWait.MCP_TASK,
        firstIntervalMs: handle.pollIntervalMs,
        unsuggestedMs: MCP_TASK_POLL_DEFAULT_MS,
        poll: (options, polled) => agentCalls.pollMcpTask.executeWithOptions(options, [{ ...polled, handle }]),
      },
      attempt,
      startedAt,
    );
  }

  /** The task an A2A agent goes on with for this one, polled with `GetTask`, soon at first. */
  private a2aTaskEnded(handle: A2aTaskHandle, attempt: number, startedAt: number): Promise<TaskOutcome> {
    this.a2aTask = handle;
    return this.agentTaskEnded(
      {
        kind: 'A2A task',
        name: `A2A task ${handle.a2aTaskId}`,
        wait: TaskWait.A2A_TASK,
        unsuggestedMs: AGENT_TASK_POLL_MIN_MS,
        poll: (options, polled) => agentCalls.pollA2aTask.executeWithOptions(options, [{ ...polled, handle }]),
      },
      attempt,
      startedAt,
    );
  }

  /** Step, after a 202: the agent's report, or its input request; false once the task's timeoutMs has passed. */
  private reportArrived(startedAt: number): Promise<boolean> {
    return this.waitForAgent(() => this.report !== undefined || this.openRequest() !== undefined, startedAt);
  }

  /** Step, in a room, after the agent asked for input and its socket closed: its report, within the task's timeoutMs. */
  private async reportOverHttp(startedAt: number): Promise<TaskOutcome> {
    let arrived = await this.reportArrived(startedAt);
    for (let request = this.openRequest(); arrived && request && !this.report;) {
      const failed = await this.inputTaken(request, startedAt, 1);
      if (failed) return failed;
      arrived = await this.reportArrived(startedAt);
      request = this.openRequest();
    }
    if (this.report) return outcomeOfReport(this.report, 1);
    return failure({
      code: TaskErrorCode.AGENT_TIMEOUT,
      message: `Agent asked for input over its room socket but reported nothing within ${this.task.timeoutMs} ms`,
    });
  }

  /** The agent's input request not taken up yet. */
  private openRequest(): InputRequestNotice | undefined {
    return this.inputRequest?.requestId === this.takenUpRequest ? undefined : this.inputRequest;
  }

  /**
   * Step, when the agent asked for input: announced in the task's room, waited for with a timer
   * named after it (within the task's timeoutMs), then delivered to the agent, after which the task
   * waits for the agent again. An outcome when the task ends here: no input came, or it could not
   * be delivered. A report that comes meanwhile ends the wait, and the task.
   */
  private async inputTaken(
    request: InputRequestNotice,
    startedAt: number,
    attempt: number,
  ): Promise<TaskOutcome | undefined> {
    this.takenUpRequest = request.requestId;
    if (!patched(INPUT_REQUESTS)) return undefined;
    const { task } = this;
    const { requestId, message, inputSchema } = request;
    if (task.room) {
      await this.announceInRoom(task.room, {
        status: TaskStatus.INPUT_REQUIRED,
        requestId,
        message,
        ...(inputSchema === undefined ? {} : { inputSchema }),
      });
    }
    this.waitFor(TaskWait.INPUT);
    const remainingMs = task.timeoutMs - (Date.now() - startedAt);
    const answered =
      remainingMs > 0 &&
      (await condition(() => this.report !== undefined || this.answeredRequests.has(requestId), remainingMs, {
        summary: `input for task ${task.taskId}: ${message.slice(0, 200)}`,
      }));
    if (this.report) return undefined;
    if (!answered) {
      return failure(
        {
          code: TaskErrorCode.INPUT_TIMEOUT,
          message: `No input came within the task's ${task.timeoutMs} ms for the agent's request: ${message.slice(0, 1_000)}`,
        },
        attempt,
      );
    }
    this.waitFor(TaskWait.INPUT_DELIVERY);
    try {
      await this.deliverInput(requestId);
    } catch (error) {
      if (isCancellation(error)) throw error;
      return failure(activityError(error), attempt);
    }
    if (task.room) await this.announceInRoom(task.room, { status: TaskStatus.PENDING, requestId });
    return undefined;
  }

  /** The answer over the agent's room socket when some API process holds it, else a signed POST. */
  private async deliverInput(requestId: string): Promise<void> {
    const { taskId, agentId, operation, room } = this.task;
    if (room) {
      const queue = await bookkeeping.findAgentSocket.executeWithOptions(
        { ...bookkeepingOptions, summary: `find agent socket: ${this.describe()}` },
        [{ roomId: room.roomId, agentId }],
      );
      if (queue !== null) {
        const sent = await roomDeliveryAt(queue)
          .deliverTaskInput.executeWithOptions(
            { ...roomDeliveryOptions, taskQueue: queue, summary: `TASK_INPUT frame: ${this.describe()}` },
            [{ roomId: room.roomId, taskId, agentId, requestId }],
          )
          .catch((error: unknown) => {
            if (isCancellation(error)) throw error;
            return false;
          });
        if (sent) return;
      }
    }
    await inputDeliveries.deliverTaskInput.executeWithOptions(
      { ...inputDeliveryOptions, summary: `input to ${this.describe()} (task ${taskId})` },
      [{ taskId, agentId, operation, requestId }],
    );
  }

  /** Until `done`, or the task's timeoutMs since it started; a timer named after what it waits for. */
  private waitForAgent(done: () => boolean, startedAt: number): Promise<boolean> {
    this.waitFor(TaskWait.REPORT);
    const remainingMs = this.task.timeoutMs - (Date.now() - startedAt);
    if (remainingMs <= 0) return Promise.resolve(false);
    if (!this.run.visibleCalls) return condition(done, remainingMs);
    return condition(done, remainingMs, { summary: `report from ${this.task.agentName} for task ${this.task.taskId}` });
  }

  /** Records the task's end (unless its call did), then tells whoever waits for it. */
  private async conclude(outcome: TaskOutcome): Promise<void> {
    const { task } = this;
    if (!this.answerStoredByCall) {
      await bookkeeping.recordTask.executeWithOptions(
        { ...bookkeepingOptions, summary: `record ${outcome.status}: ${this.describe()}` },
        [this.ref(), outcome],
      );
    }
    this.outcomeStored = true;
    this.waitFor(undefined);
    // After the record: neither an unreachable agent nor a slow callback receiver delays the outcome.
    // An MCP or A2A task is cancelled whenever this task ended without its answer, at a timeout too.
    if (this.awaitingReport && (outcome.status === TaskStatus.CANCELLED || this.mcpTask || this.a2aTask)) {
      this.run.deliveries.push(
        notifications.notifyCancellation
          .executeWithOptions({ ...notificationOptions, summary: `tell of cancellation: ${this.describe()}` }, [
            {
              taskId: task.taskId,
              agentId: task.agentId,
              ...(this.mcpTask ? { mcpTask: this.mcpTask } : {}),
              ...(this.a2aTask ? { a2aTask: this.a2aTask } : {}),
            },
          ])
          .catch(() => undefined),
      );
    }
    this.run.deliveries.push(
      ...this.deliverCallbacks(
        outcome,
        this.answerStoredByCall && outcome.result === undefined && outcome.error === undefined,
      ),
    );
    if (task.room) await this.announceInRoom(task.room, outcome);
  }

  /**
   * The task's and its agent's completion callbacks, each settled whether delivered or given up.
   * `outcomeInStore`: the call left the result or error in the task store only, where the activity reads it.
   */
  private deliverCallbacks(outcome: TaskOutcome, outcomeInStore: boolean): Array<Promise<void>> {
    const { task } = this;
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
        .executeWithOptions(
          { ...callbackOptions, summary: `callback to ${target.kind}: ${this.describe()}` },
          outcomeInStore ? [target, callback, true] : [target, callback],
        )
        .catch(() => undefined),
    );
  }

  /** The task_update SYSTEM frame, to every API process with sockets to the room; a process gone misses it. */
  private async announceInRoom(room: RoomOfTask, outcome: TaskUpdate): Promise<void> {
    const { task } = this;
    const queues = await bookkeeping.findRoomSockets.executeWithOptions(
      { ...bookkeepingOptions, summary: `find room sockets: ${this.describe()}` },
      [room.roomId],
    );
    await Promise.all(
      queues.map((queue) =>
        roomDeliveryAt(queue)
          .publishTaskUpdate.executeWithOptions(
            { ...roomDeliveryOptions, taskQueue: queue, summary: `task_update: ${this.describe()}` },
            [{ roomId: room.roomId, taskId: task.taskId, agentId: task.agentId, outcome }],
          )
          .catch(() => undefined),
      ),
    );
  }

  /** The task and the event log its records go to. */
  private ref(): { taskId: string; compositionId?: string } {
    const { compositionId } = this.run.input;
    return { taskId: this.task.taskId, ...(compositionId === undefined ? {} : { compositionId }) };
  }

  private describe(): string {
    return `${this.task.agentName}: ${this.task.operation}`;
  }

  private waitFor(wait: TaskWait | undefined): void {
    this.waitingFor = wait;
    this.run.changed();
  }
}
