// The wait for the agent once it took the task: its report, or its input requests one after
// another, within the task's timeoutMs; over a room socket, also the socket closing. A task waits
// so after the TASK frame, after a 202, and over HTTP once a socket that asked for input closed.
//
// Each step loops over agentAnswered() and inputTaken() itself (TaskRun.execute()): a helper that
// looped for it would be one more async function to return from, so the step would go on one
// microtask later than the runs recorded before it did, and its next command could come after
// another task's, which a replay of those runs refuses.
import { condition } from '@temporalio/workflow';
import type { RunningTask } from './running-task';
import { TaskWait } from './task-types';

/**
 * Until the agent reports, asks for input, or (`overSocket`) its room socket closes: false once the
 * task's timeoutMs since `startedAt` has passed. A timer named after what it waits for.
 */
export function agentAnswered(running: RunningTask, startedAt: number, overSocket: boolean): Promise<boolean> {
  const { task, run, inbox } = running;
  const done = overSocket
    ? () => inbox.report !== undefined || inbox.socketLost || inbox.openRequest() !== undefined
    : () => inbox.report !== undefined || inbox.openRequest() !== undefined;
  running.waitFor(TaskWait.REPORT);
  const remainingMs = task.timeoutMs - (Date.now() - startedAt);
  if (remainingMs <= 0) return Promise.resolve(false);
  if (!run.visibleCalls) return condition(done, remainingMs);
  return condition(done, remainingMs, { summary: `report from ${task.agentName} for task ${task.taskId}` });
}

/** The wait ended on an input request, with no report (and, `overSocket`, the socket still open). */
export function asksForInput(running: RunningTask, answered: boolean, overSocket: boolean): boolean {
  const { inbox } = running;
  return answered && inbox.openRequest() !== undefined && !inbox.report && !(overSocket && inbox.socketLost);
}
