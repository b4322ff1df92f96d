// One task of a composition, from its parents to its recorded outcome. Its state lives here, in one
// class as in Temporal's samples: the stage it is at and what its agent owes it (task-state.ts), what
// it heard (task-inbox.ts). Its life is a sequence of named steps (execute()), each in the file of
// its concern: the TASK frame (task-room.ts), the call (agent-call.ts), the wait for the agent's
// report or input (report-wait.ts, input-request.ts), the poll of the agent's own task
// (followed-task.ts), a map's items (map-run.ts), and what follows the end (task-end.ts).
import { CancellationScope, condition, isCancellation, patched } from '@temporalio/workflow';
import type { CallAgentResult } from './activity-contract';
import { bookkeeping, bookkeepingOptions } from './activity-stubs';
import { callAgent } from './agent-call';
import { a2aTaskEnded, mcpTaskEnded } from './followed-task';
import { activityError, failure, outcomeOfAnswer, outcomeOfReport } from './outcomes';
import { pendingArgumentsOf, substitute, usesPointers } from './pending-arguments';
import { checkCondition, conditionValue, outcomeOfCheck, skipped } from './task-condition';
import { inputTaken } from './input-request';
import { mapEnded } from './map-run';
import { agentAnswered, asksForInput } from './report-wait';
import { describe, recordedTaskOf, type RunningTask, type RunOfTask, type TaskOfRun } from './running-task';
import { deliverAfterEnd, recordOutcome } from './task-end';
import { TaskInbox } from './task-inbox';
import { announceInRoom, deliverTaskFrame } from './task-room';
import {
  NOT_TAKEN,
  OWES_REPORT,
  recordedByCall,
  statusOf,
  waitingFor,
  waitingForOf,
  type AgentClaim,
  type TaskStage,
} from './task-state';
import {
  SkipReasonCode,
  TaskErrorCode,
  TaskPhase,
  TaskStatus,
  TaskWait,
  type AgentReport,
  type InputAnswerNotice,
  type InputRequestNotice,
  type PlannedTask,
  type TaskOutcome,
  type TaskProgress,
} from './task-types';
import { FAIL_AT_FIRST_FAILED_PARENT, PENDING_ARGUMENT_POINTERS, TASK_CONDITIONS } from './versions';

type Params = Record<string, unknown>;

/** A skipped parent did not fail: its dependants are skipped instead (parentSkipped). */
const failedOrCancelled = (parent: TaskOfRun): boolean =>
  parent.outcome?.status === TaskStatus.FAILED || parent.outcome?.status === TaskStatus.CANCELLED;

export class TaskRun implements RunningTask, TaskOfRun {
  readonly inbox = new TaskInbox();
  agent: AgentClaim = NOT_TAKEN;
  private stage: TaskStage;
  /** Calls made to the agent, once a call ended. */
  private attempts?: number;
  /** Cancelling one task leaves its siblings running. */
  private readonly scope = new CancellationScope();

  constructor(
    readonly task: PlannedTask,
    readonly position: number,
    readonly run: RunOfTask,
    readonly keepsResult: boolean,
  ) {
    this.stage = waitingFor(task.parents.length > 0 ? TaskWait.PARENTS : TaskWait.AGENT_CALL);
  }

  /** Set once the task ended, before it is recorded: dependants read it. */
  get outcome(): TaskOutcome | undefined {
    return this.stage.kind === 'ended' || this.stage.kind === 'recorded' ? this.stage.outcome : undefined;
  }

  /** The agent's report (`agentReport` signal); the first one counts. */
  reported(report: AgentReport): void {
    // An agent may report while its call is still being retried, say after a reply lost on the way
    // back: the report ends the task, and the call with it.
    if (this.inbox.reported(report) && this.stage.kind === 'calling') this.stage.scope.cancel();
  }

  /** The agent asks for a person's input; ignored once the task ended. */
  inputRequested(request: InputRequestNotice): void {
    if (this.outcome === undefined) this.inbox.inputRequested(request);
  }

  /** A person answered an input request; the API stored the input. */
  inputAnswered({ requestId }: InputAnswerNotice): void {
    this.inbox.inputAnswered(requestId);
  }

  /** The agent's socket that got the TASK frame closed before it answered. */
  socketClosed(): void {
    this.inbox.socketLost = true;
  }

  /** The A2A agent pushed an update of its task: the next poll of it is now. */
  a2aTaskPushed(): void {
    this.inbox.pushArrived = true;
  }

  /** `POST /tasks/{taskId}/cancel`: answers the status the task ended with, once recorded. */
  async cancel(): Promise<TaskStatus> {
    if (this.outcome === undefined) {
      this.inbox.cancelRequested = true;
      this.scope.cancel();
    }
    await condition(() => this.stage.kind === 'recorded');
    return this.outcome!.status;
  }

  progress(): TaskProgress {
    const { taskId, agentId, agentName, operation } = this.task;
    const waiting = waitingForOf(this.stage);
    return {
      position: this.position,
      taskId,
      agentId,
      agentName,
      operation,
      status: statusOf(this.stage),
      ...(this.attempts === undefined ? {} : { attempts: this.attempts }),
      ...(waiting === undefined ? {} : { waitingFor: waiting }),
    };
  }

  waitFor(wait: Exclude<TaskWait, typeof TaskWait.RECORD>): void {
    this.moveTo(waitingFor(wait));
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
      (this.inbox.cancelRequested && !recordedByCall(this.agent)) || outcome === undefined
        ? { status: TaskStatus.CANCELLED }
        : outcome;
    if (ended.attempts !== undefined) this.attempts = ended.attempts;
    // Dependants may start before the task store is written: they only read the outcome held here.
    this.moveTo({ kind: 'ended', outcome: ended });
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
    const { task, inbox } = this;
    let params = task.params;
    if (task.parents.length > 0) {
      await this.parentsEnded();
      const endedByParent = this.parentFailure() ?? this.parentSkipped();
      if (endedByParent) return endedByParent;
      if (task.when !== undefined && patched(TASK_CONDITIONS)) {
        const read = conditionValue(this, task.when);
        if (!('value' in read)) return read;
        try {
          const unmet = outcomeOfCheck(task.when, await checkCondition(this, task.when, read.value));
          if (unmet) return unmet;
        } catch (error) {
          return failure(activityError(error));
        }
      }
    }
    // A map's items run in its child workflow (new runs only: no recorded input has forEach).
    if (task.forEach) return mapEnded(this, this.substituteArguments());
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
    // A dependant moves from waiting_for_parents to calling_agent (a task without parents starts there).
    const callSetsPhase = task.parents.length > 0 && this.run.callingPhaseInCall();
    if (task.parents.length > 0 && !callSetsPhase) await this.recordCallingPhase();

    if (task.room && (await deliverTaskFrame(this, task.room, params))) {
      this.agent = OWES_REPORT;
      let answered = await agentAnswered(this, startedAt, true);
      while (asksForInput(this, answered, true)) {
        const failed = await inputTaken(this, inbox.openRequest()!, startedAt, 1);
        if (failed) return failed;
        answered = await agentAnswered(this, startedAt, true);
      }
      if (inbox.report) return outcomeOfReport(inbox.report, 1);
      if (!answered)
        return failure({
          code: TaskErrorCode.AGENT_TIMEOUT,
          message: `Agent got the task over its room socket but answered nothing within ${task.timeoutMs} ms`,
        });
      // An agent that asked for input has the task: with its socket gone it reports over HTTP, and
      // is not called with the task again (the answer went to its mcpUrl).
      if (inbox.tookUpInput()) return this.reportOverHttp(startedAt);
      this.agent = NOT_TAKEN;
    }

    if (inbox.report) return outcomeOfReport(inbox.report);
    let replied: CallAgentResult;
    this.moveTo({ kind: 'calling', scope: CancellationScope.current() });
    try {
      replied = await callAgent(this, params, callSetsPhase);
    } catch (error) {
      if (inbox.report) return outcomeOfReport(inbox.report);
      // A cancellation: live() records it. Otherwise the activity recorded its attempts in the task store itself.
      if (isCancellation(error)) throw error;
      return failure(activityError(error));
    } finally {
      // The call ended: a report no longer cancels anything.
      this.stage = waitingFor(TaskWait.AGENT_CALL);
    }
    this.attempts = replied.attempt;
    if (replied.kind === 'mcpTask') return mcpTaskEnded(this, replied.handle, replied.attempt, startedAt);
    if (replied.kind === 'a2aTask') return a2aTaskEnded(this, replied.handle, replied.attempt, startedAt);
    if (replied.kind !== 'accepted' && replied.recorded) {
      this.agent = { kind: 'answered', recorded: true };
      return outcomeOfAnswer(replied);
    }
    // A report that came while the call ran: its outcome, with the attempts the call made.
    if (inbox.report) return outcomeOfReport(inbox.report, replied.attempt);
    if (replied.kind !== 'accepted') {
      this.agent = { kind: 'answered', recorded: false };
      return outcomeOfAnswer(replied);
    }

    this.agent = OWES_REPORT;
    let arrived = await agentAnswered(this, startedAt, false);
    while (asksForInput(this, arrived, false)) {
      const failed = await inputTaken(this, inbox.openRequest()!, startedAt, replied.attempt);
      if (failed) return failed;
      arrived = await agentAnswered(this, startedAt, false);
    }
    if (!arrived) {
      return failure(
        {
          code: TaskErrorCode.AGENT_TIMEOUT,
          message: `Agent accepted the task but reported no outcome within ${task.timeoutMs} ms`,
        },
        replied.attempt,
      );
    }
    return outcomeOfReport(inbox.report!, replied.attempt);
  }

  /** Step: every parent ended, or (FAIL_AT_FIRST_FAILED_PARENT) one failed and this task cannot run. */
  private parentsEnded(): Promise<void> {
    const failsEarly = !this.task.executeOnParentFailure && patched(FAIL_AT_FIRST_FAILED_PARENT);
    this.waitFor(TaskWait.PARENTS);
    return condition(
      () =>
        this.parentRuns().every((parent) => parent.outcome !== undefined) ||
        (failsEarly && this.parentRuns().some(failedOrCancelled)),
    );
  }

  /** DEPENDENCY_FAILED when a parent failed or was cancelled, unless the task runs on a parent's failure. */
  private parentFailure(): TaskOutcome | undefined {
    const failed = this.parentRuns().find(failedOrCancelled);
    if (failed === undefined || this.task.executeOnParentFailure) return undefined;
    return failure({
      code: TaskErrorCode.DEPENDENCY_FAILED,
      message: `Parent task ${failed.position} (${failed.task.taskId}) ${failed.outcome!.status}`,
    });
  }

  /** Skipped when a parent was skipped, unless the task runs if a parent was skipped. */
  private parentSkipped(): TaskOutcome | undefined {
    const skippedParent = this.parentRuns().find((parent) => parent.outcome?.status === TaskStatus.SKIPPED);
    if (skippedParent === undefined || this.task.runIfParentSkipped) return undefined;
    return skipped({
      code: SkipReasonCode.PARENT_SKIPPED,
      message: `Parent task ${skippedParent.position} (${skippedParent.task.taskId}) was skipped`,
    });
  }

  private parentRuns(): TaskOfRun[] {
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
      { ...bookkeepingOptions, summary: `check params: ${describe(this)}` },
      [{ agentId: this.task.agentId, operation: this.task.operation, params }],
    );
  }

  /** A dependant's phase moves to calling_agent in a write of its own, in runs without CALLING_PHASE_IN_CALL. */
  private recordCallingPhase(): Promise<void> {
    return bookkeeping.recordTask.executeWithOptions({ ...bookkeepingOptions, summary: `calling: ${describe(this)}` }, [
      recordedTaskOf(this),
      { phase: TaskPhase.CALLING_AGENT },
    ]);
  }

  /** Step, in a room, after the agent asked for input and its socket closed: its report, within the task's timeoutMs. */
  private async reportOverHttp(startedAt: number): Promise<TaskOutcome> {
    let arrived = await agentAnswered(this, startedAt, false);
    while (asksForInput(this, arrived, false)) {
      const failed = await inputTaken(this, this.inbox.openRequest()!, startedAt, 1);
      if (failed) return failed;
      arrived = await agentAnswered(this, startedAt, false);
    }
    if (this.inbox.report) return outcomeOfReport(this.inbox.report, 1);
    return failure({
      code: TaskErrorCode.AGENT_TIMEOUT,
      message: `Agent asked for input over its room socket but reported nothing within ${this.task.timeoutMs} ms`,
    });
  }

  /** Records the task's end (unless its call did), then tells whoever waits for it. */
  private async conclude(outcome: TaskOutcome): Promise<void> {
    if (!recordedByCall(this.agent)) await recordOutcome(this, outcome);
    this.moveTo({ kind: 'recorded', outcome });
    deliverAfterEnd(this, outcome);
    if (this.task.room) await announceInRoom(this, this.task.room, outcome);
  }

  private moveTo(stage: TaskStage): void {
    this.stage = stage;
    this.run.changed();
  }
}
