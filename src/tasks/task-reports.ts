import { createHash } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/common';
import { PrincipalKind, type Principal } from '../auth/principal';
import { ApiError, ErrorCode, forbidden, invalid } from '../http/errors';
import { requestInput, type TaskInputDeps } from './task-inputs';
import { canonicalJson } from '../util/canonical-json';
import { refOf, type TaskDocument } from './task-document';
import { CANCELLATION_CLAIM } from './task-claims';
import { TaskEventType } from '../task-events/task-event';
import { readableTask } from './task-access';
import {
  agentReportSignal,
  isLive,
  normaliseResult,
  TaskStatus,
  type AgentReport,
  type TaskError,
  workflowIdOf,
} from '../../workflows/task-types';

/** The body of `POST /tasks/{taskId}/result`, as AGENT_REPORT_SCHEMA admits it. */
export interface AgentReportBody {
  taskId?: string;
  status: 'completed' | 'failed' | 'pending' | 'input-required';
  result?: unknown;
  error?: TaskError;
  message?: string;
  progress?: number;
  inputSchema?: Record<string, unknown>;
}

const conflict = (taskId: string) =>
  new ApiError(ErrorCode.CONFLICT, `Task ${taskId} already ended with a different outcome`);

/**
 * An agent's report on its task: progress goes to the task store, an outcome to the workflow as the
 * agentReport signal. Repeating the outcome reported first, or the one the task ended with, answers
 * 200; a different one 409, before the end as after it.
 */
export async function deliverReport(
  deps: TaskInputDeps,
  principal: Principal,
  taskId: string,
  body: AgentReportBody,
): Promise<{ taskId: string; status: string; requestId?: string }> {
  const { taskStore, claims, temporal } = deps;
  const task = readableTask(principal, await taskStore.find(taskId), taskId);
  const isItsAgent = principal.kind === PrincipalKind.AGENT && principal.id === task.agentId;
  if (!isItsAgent && principal.kind !== PrincipalKind.ADMIN)
    throw forbidden('Only the agent executing this task, or an admin, may report on it');
  checkReportBody(taskId, body);

  if (body.status === TaskStatus.INPUT_REQUIRED) {
    if (body.message === undefined) throw invalid('An input-required report needs a message saying what it asks');
    return requestInput(deps, task, {
      message: body.message,
      ...(body.inputSchema ? { inputSchema: body.inputSchema } : {}),
    });
  }

  if (body.status === TaskStatus.PENDING) {
    if (!isLive(task.status)) throw conflict(taskId);
    const news = {
      ...(body.progress === undefined ? {} : { progress: body.progress }),
      ...(body.message === undefined ? {} : { message: body.message }),
    };
    await taskStore.updateIfNotEnded(refOf(task), { ...news, event: { type: TaskEventType.PROGRESS, ...news } });
    return { taskId, status: TaskStatus.PENDING };
  }
  const report = reportOf(taskId, body);
  if (!isLive(task.status)) {
    if (!endedWith(task, report)) throw conflict(taskId);
    return { taskId, status: report.status };
  }
  const held = await claims.claimOutcome(taskId, digestOf(report), report.status);
  if (held) {
    const which =
      held.digest === CANCELLATION_CLAIM
        ? 'is being cancelled'
        : 'already has a different outcome reported, which it ends with';
    throw new ApiError(ErrorCode.CONFLICT, `Task ${taskId} ${which}`);
  }
  try {
    await temporal.client.workflow.getHandle(workflowIdOf(task)).signal(agentReportSignal, report);
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    // The run ended between our read and the signal: judge the report against how it ended.
    const ended = await taskStore.find(taskId);
    if (!ended || !endedWith(ended, report)) throw conflict(taskId);
  }
  return { taskId, status: report.status };
}

/** What the schema cannot say: a body that names another task, or carries a member its status would drop. */
function checkReportBody(taskId: string, body: AgentReportBody): void {
  if (body.taskId !== undefined && body.taskId !== taskId) {
    throw new ApiError(
      ErrorCode.VALIDATION_ERROR,
      `The body's taskId (${body.taskId}) is not the task of the path (${taskId})`,
    );
  }
  const dropped =
    body.status === TaskStatus.COMPLETED
      ? ['error', 'inputSchema']
      : body.status === TaskStatus.FAILED
        ? ['result', 'inputSchema']
        : body.status === TaskStatus.PENDING
          ? ['result', 'error', 'inputSchema']
          : ['result', 'error', 'progress'];
  const extra = dropped.find((member) => member in body);
  if (extra) throw new ApiError(ErrorCode.VALIDATION_ERROR, `A ${body.status} report carries no ${extra}`);
}

function reportOf(taskId: string, body: AgentReportBody): AgentReport {
  if (body.status === TaskStatus.COMPLETED) {
    if (!('result' in body)) throw new ApiError(ErrorCode.VALIDATION_ERROR, 'A completed report needs a result');
    return { taskId, status: TaskStatus.COMPLETED, result: normaliseResult(body.result) };
  }
  if (body.error === undefined) throw new ApiError(ErrorCode.VALIDATION_ERROR, 'A failed report needs an error');
  return { taskId, status: TaskStatus.FAILED, error: body.error };
}

function digestOf(report: AgentReport): string {
  const outcome =
    report.status === TaskStatus.COMPLETED
      ? { status: report.status, result: report.result }
      : { status: report.status, error: report.error };
  return createHash('sha256').update(canonicalJson(outcome)).digest('base64');
}

function endedWith(task: TaskDocument, report: AgentReport): boolean {
  if (task.status !== report.status) return false;
  const [stored, reported] =
    report.status === TaskStatus.COMPLETED ? [task.result, report.result] : [task.error, report.error];
  return stored !== undefined && canonicalJson(JSON.parse(stored)) === canonicalJson(reported);
}
