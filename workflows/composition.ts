// One workflow per composition; a single task is a composition of one. Tasks form a DAG through
// `parents`: each starts the moment its parents ended, independent ones run concurrently.
import { ActivityFailure, ApplicationFailure, condition, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { pendingArgumentsOf, substitute } from '../src/router/pending-arguments';
import {
  agentReportSignal,
  normaliseResult,
  TaskErrorCode,
  TaskPhase,
  TaskStatus,
  type AgentReport,
  type CompositionInput,
  type PlannedTask,
  type TaskError,
  type TaskOutcome,
  type TaskResult,
} from '../src/router/task-types';

/**
 * Index writes and schema checks: short, so local activities (run inside the workflow task, no
 * round trip through the server of their own); retried until MongoDB answers again.
 */
const bookkeepingOptions = {
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
} as const;

const bookkeeping = proxyLocalActivities<Activities>(bookkeepingOptions);
/** The agent call: a regular activity (it may take the whole call timeout and many retries); options per task at the call site. */
const agentCalls = proxyActivities<Activities>(bookkeepingOptions);

/** Margin of the activity's own timeout over the HTTP call's, for loading the agent and recording. */
const CALL_ACTIVITY_MARGIN_MS = 10_000;

export interface CompositionSummary {
  tasks: Array<{ taskId: string; status: TaskStatus }>;
}

export async function compositionWorkflow(input: CompositionInput): Promise<CompositionSummary> {
  // Kept even when it arrives before the call returned 202, so a fast agent's report is not lost.
  const reports = new Map<string, AgentReport>();
  setHandler(agentReportSignal, (report) => {
    if (!reports.has(report.taskId)) reports.set(report.taskId, report);
  });

  const outcomes: Array<TaskOutcome | undefined> = input.tasks.map(() => undefined);

  async function runTask(task: PlannedTask, position: number): Promise<void> {
    if (task.parents.length > 0) await condition(() => task.parents.every((parent) => outcomes[parent] !== undefined));
    const failedParent = task.parents.find((parent) => outcomes[parent]!.status !== TaskStatus.COMPLETED);
    const outcome =
      failedParent !== undefined && !task.executeOnParentFailure
        ? failure({ code: TaskErrorCode.DEPENDENCY_FAILED, message: `Parent task ${failedParent} (${input.tasks[failedParent].taskId}) ${outcomes[failedParent]!.status}` })
        : await execute(task, input.agentCallTimeoutMs, outcomes, reports);
    // Children may start before the index is written: they only read the outcome held here.
    outcomes[position] = outcome;
    await bookkeeping.recordTask.executeWithOptions(
      { ...bookkeepingOptions, summary: `record ${outcome.status}: ${describeTask(task)}` },
      [task.taskId, outcome],
    );
  }

  await Promise.all(input.tasks.map(runTask));
  return { tasks: input.tasks.map((task, position) => ({ taskId: task.taskId, status: outcomes[position]!.status })) };
}

const describeTask = (task: PlannedTask): string => `${task.agentName}: ${task.operation}`;

const failure = (error: TaskError, attempts?: number): TaskOutcome => ({ status: TaskStatus.FAILED, error, ...(attempts === undefined ? {} : { attempts }) });

async function execute(task: PlannedTask, agentCallTimeoutMs: number, outcomes: Array<TaskOutcome | undefined>, reports: Map<string, AgentReport>): Promise<TaskOutcome> {
  const startedAt = Date.now();
  let params = task.params;
  if (pendingArgumentsOf(params).length > 0) {
    const parentResults: Array<TaskResult | undefined> = outcomes.map((outcome) => (outcome?.status === TaskStatus.COMPLETED ? outcome.result : undefined));
    const substitution = substitute(params, parentResults);
    if ('error' in substitution) return failure(substitution.error);
    try {
      params = await bookkeeping.validateParams.executeWithOptions({ ...bookkeepingOptions, summary: `check params: ${describeTask(task)}` }, [
        { agentId: task.agentId, operation: task.operation, params: substitution.params },
      ]);
    } catch (error) {
      return failure(activityError(error));
    }
  }

  if (task.parents.length > 0) {
    await bookkeeping.recordTask.executeWithOptions({ ...bookkeepingOptions, summary: `calling: ${describeTask(task)}` }, [task.taskId, { phase: TaskPhase.CALLING_AGENT }]);
  }
  let reply;
  try {
    reply = await agentCalls.callAgent.executeWithOptions(
      {
        summary: describeTask(task),
        startToCloseTimeout: agentCallTimeoutMs + CALL_ACTIVITY_MARGIN_MS,
        retry: {
          maximumAttempts: task.retry.maxAttempts,
          initialInterval: task.retry.initialIntervalMs,
          backoffCoefficient: task.retry.backoffCoefficient,
          maximumInterval: task.retry.maxIntervalMs,
        },
      },
      [{ taskId: task.taskId, agentId: task.agentId, operation: task.operation, params }],
    );
  } catch (error) {
    // The activity recorded its attempts in the index itself.
    return failure(activityError(error));
  }

  if (reply.kind === 'completed') return { status: TaskStatus.COMPLETED, result: reply.result, attempts: reply.attempt };
  if (reply.kind === 'failed') return failure(reply.error, reply.attempt);

  const remainingMs = task.timeoutMs - (Date.now() - startedAt);
  const reported = remainingMs > 0 && (await condition(() => reports.has(task.taskId), remainingMs));
  if (!reported) {
    return failure({ code: TaskErrorCode.AGENT_TIMEOUT, message: `Agent accepted the task but reported no outcome within ${task.timeoutMs} ms` }, reply.attempt);
  }
  const report = reports.get(task.taskId)!;
  return report.status === TaskStatus.COMPLETED
    ? { status: TaskStatus.COMPLETED, result: normaliseResult(report.result), attempts: reply.attempt }
    : failure(report.error ?? { message: 'Agent reported failure' }, reply.attempt);
}

/**
 * The task error for a failed activity: a non-retryable failure carries its code as type and the
 * detail as first detail (a local activity's failure arrives unwrapped); anything else from a
 * remote activity (retries used up, timeouts) means the agent was unreachable.
 */
function activityError(error: unknown): TaskError {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure && cause.nonRetryable && cause.type) {
    return { code: cause.type, message: cause.message, ...(cause.details?.length ? { details: cause.details[0] } : {}) };
  }
  if (!(error instanceof ActivityFailure)) throw error;
  return { code: TaskErrorCode.AGENT_UNREACHABLE, message: `Agent unreachable after its retries: ${error.cause?.message ?? error.message}` };
}
