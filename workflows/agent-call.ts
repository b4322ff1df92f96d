// The agent call: one activity with the task's retries, its timeouts the run's own.
import { ActivityCancellationType, workflowInfo } from '@temporalio/workflow';
import type { CallAgentResult } from './activity-contract';
import { agentCalls, bookkeeping, CALL_ACTIVITY_MARGIN_MS, CALL_HEARTBEAT_TIMEOUT } from './activity-stubs';
import { describe, type RunningTask } from './running-task';
import type { PlannedTask } from './task-types';

/** The task's retry settings as Temporal's retry policy: its calls and polls are retried by it. */
export const retryPolicyOf = ({ retry }: PlannedTask) => ({
  maximumAttempts: retry.maxAttempts,
  initialInterval: retry.initialIntervalMs,
  backoffCoefficient: retry.backoffCoefficient,
  maximumInterval: retry.maxIntervalMs,
});

/** The time one call (or poll) activity may take: the HTTP call's timeout, and a margin for loading the agent and recording. */
export const callActivityTimeoutMs = ({ run }: RunningTask): number =>
  run.input.agentCallTimeoutMs + CALL_ACTIVITY_MARGIN_MS;

/**
 * Step: the call with its retries. Nothing is decided before an attempt ended
 * (WAIT_CANCELLATION_COMPLETED: it hears of a cancellation through its heartbeats), so an answer
 * it recorded in the task store is never overwritten. With `setsCallingPhase`, the call's first
 * write moves the task to calling_agent (CALLING_PHASE_IN_CALL).
 */
export function callAgent(
  running: RunningTask,
  params: Record<string, unknown>,
  setsCallingPhase = false,
): Promise<CallAgentResult> {
  const { task, run } = running;
  const options = {
    startToCloseTimeout: callActivityTimeoutMs(running),
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: retryPolicyOf(task),
  };
  const input = {
    taskId: task.taskId,
    agentId: task.agentId,
    operation: task.operation,
    params,
    maxAttempts: task.retry.maxAttempts,
    keepsResult: running.keepsResult,
    ...(setsCallingPhase ? { setsCallingPhase } : {}),
    // A map's item: queued until its call, which moves it to calling_agent, its params in its record.
    ...(task.paramsInStore ? { paramsFromStore: true, setsCallingPhase: true } : {}),
  };
  if (run.visibleCalls) {
    const { runId, firstExecutionRunId } = workflowInfo();
    return agentCalls.callAgent.executeWithOptions(
      {
        ...options,
        heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
        summary: `${describe(running)} (task ${task.taskId})`,
      },
      [{ ...input, firstRun: runId === firstExecutionRunId }],
    );
  }
  // Runs started before VISIBLE_AGENT_CALLS make the call as a local activity.
  return bookkeeping.callAgent.executeWithOptions({ ...options, summary: describe(running) }, [input]);
}
