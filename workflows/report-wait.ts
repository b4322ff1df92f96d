// The wait for the agent once it took the task: its report, or its input requests one after
// another, within the task's timeoutMs; over a room socket, also the socket closing. A task waits
// so after the TASK frame, after a 202, and over HTTP once a socket that asked for input closed.
//
// Each waits in two parts: agentAnswered(), awaited by the step itself, and, only when the agent
// asked for input, inputsTaken(). A run without requests then keeps the order of awaits the
// workflow always had (see TaskRun.execute()).
import { condition } from '@temporalio/workflow';
import { inputTaken } from './input-request';
import type { RunningTask } from './running-task';
import { TaskWait, type TaskOutcome } from './task-types';

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

/**
 * The agent's open input requests taken up one after another, each followed by agentAnswered()
 * again: what the last wait answered, or the outcome when a request ended the task.
 */
export async function inputsTaken(
  running: RunningTask,
  startedAt: number,
  attempt: number,
  overSocket: boolean,
): Promise<boolean | TaskOutcome> {
  let answered: boolean;
  do {
    const failed = await inputTaken(running, running.inbox.openRequest()!, startedAt, attempt);
    if (failed) return failed;
    answered = await agentAnswered(running, startedAt, overSocket);
  } while (asksForInput(running, answered, overSocket));
  return answered;
}
