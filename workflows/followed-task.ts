// A task the agent goes on with on its side, after its call answered with it: an MCP task (MCP's
// tasks extension, polled with `tasks/get`) or an A2A task (polled with `GetTask`). The workflow
// polls it on named timers until it ends, or until the task's timeoutMs has passed; an A2A task
// whose agent pushes its updates is polled at each push, the timers only a fallback, and an A2A task
// waiting for input is polled as soon as a person answered (the poll carries the answer). Runs
// recorded before such agents existed never get here (no call of theirs answers `mcpTask` or
// `a2aTask`), so the step needs no patch to replay them; pushes and answers have one each
// (A2A_TASK_PUSHES, A2A_ANSWER_WAKES_POLL).
import { condition, isCancellation, patched, type ActivityOptions } from '@temporalio/workflow';
import type { A2aTaskPoll, McpTaskPoll, PolledTask } from './activity-contract';
import { agentCalls } from './activity-stubs';
import { callActivityTimeoutMs, retryPolicyOf } from './agent-call';
import { activityError, failure, outcomeOfAnswer, outcomeOfReport } from './outcomes';
import { describe, type RunningTask } from './running-task';
import type { AgentTask } from './task-state';
import { TaskErrorCode, TaskWait, type A2aTaskHandle, type McpTaskHandle, type TaskOutcome } from './task-types';
import { A2A_ANSWER_WAKES_POLL, A2A_TASK_PUSHES } from './versions';

/**
 * Between polls: the agent's suggestion, but never under a twelfth of the time the task has run,
 * within 1 s and 60 s. Each poll adds about a dozen events to the run's history, which Temporal
 * caps at 51 200: polls that slow down as the task ages let a task run for days, where a steady
 * 5 s would end the run within hours. An MCP server that suggests nothing is polled every 5 s; an
 * A2A agent, which has no way to suggest, every second at first.
 */
const MCP_TASK_POLL_DEFAULT_MS = 5_000;
const AGENT_TASK_POLL_MIN_MS = 1_000;
const AGENT_TASK_POLL_MAX_MS = 60_000;
const AGENT_TASK_POLL_AGE_SHARE = 12;
/** Between polls of an A2A task whose updates the agent pushes: a push lost on the way is noticed within this. */
const PUSHED_TASK_POLL_MS = AGENT_TASK_POLL_MAX_MS;
const agentTaskPollDelayMs = (suggestedMs: number, elapsedMs: number): number =>
  Math.min(
    AGENT_TASK_POLL_MAX_MS,
    Math.max(AGENT_TASK_POLL_MIN_MS, suggestedMs, Math.floor(elapsedMs / AGENT_TASK_POLL_AGE_SHARE)),
  );

/** A task the agent goes on with, and how the workflow polls it. */
interface FollowedTask {
  /** The agent's task, to cancel should this one end without its answer. */
  task: AgentTask;
  /** What it is, in the poll activity's summary: `MCP task`, `A2A task`. */
  kind: string;
  /** It, in messages and timer summaries: `MCP task <its id>`. */
  name: string;
  wait: typeof TaskWait.MCP_TASK | typeof TaskWait.A2A_TASK;
  /** The agent's suggestion of the wait before the first poll, if it made one. */
  firstIntervalMs?: number;
  /** The wait between polls while the agent suggests none. */
  unsuggestedMs: number;
  /** The agent pushes the task's updates: each one ends the wait for the next poll. */
  pushed: boolean;
  /**
   * A person's answer to an input request ends the wait for the next poll: the poll delivers it
   * (an A2A task). An MCP task's poll waits for the answer itself.
   */
  polledAtAnswer: boolean;
  /** One poll: the activity, with the task it is for. */
  poll: (options: ActivityOptions, polled: PolledTask) => Promise<McpTaskPoll | A2aTaskPoll>;
}

/** Step: the MCP task an MCP agent runs for this one, polled with `tasks/get` at the pace the server suggests. */
export function mcpTaskEnded(
  running: RunningTask,
  handle: McpTaskHandle,
  attempt: number,
  startedAt: number,
): Promise<TaskOutcome> {
  return followedTaskEnded(
    running,
    {
      task: { mcpTask: handle },
      kind: 'MCP task',
      name: `MCP task ${handle.mcpTaskId}`,
      wait: TaskWait.MCP_TASK,
      firstIntervalMs: handle.pollIntervalMs,
      unsuggestedMs: MCP_TASK_POLL_DEFAULT_MS,
      pushed: false,
      polledAtAnswer: false,
      poll: (options, polled) => agentCalls.pollMcpTask.executeWithOptions(options, [{ ...polled, handle }]),
    },
    attempt,
    startedAt,
  );
}

/**
 * Step: the task an A2A agent goes on with for this one, polled with `GetTask`: soon at first, or,
 * when the agent pushes its updates, at each push and seldom otherwise; and at once when a person
 * answered the input request the task relayed (activities/a2a-input-relay.ts).
 */
export function a2aTaskEnded(
  running: RunningTask,
  handle: A2aTaskHandle,
  attempt: number,
  startedAt: number,
): Promise<TaskOutcome> {
  const pushed = handle.pushed === true && patched(A2A_TASK_PUSHES);
  const polledAtAnswer = patched(A2A_ANSWER_WAKES_POLL);
  return followedTaskEnded(
    running,
    {
      task: { a2aTask: handle },
      kind: 'A2A task',
      name: `A2A task ${handle.a2aTaskId}`,
      wait: TaskWait.A2A_TASK,
      unsuggestedMs: pushed ? PUSHED_TASK_POLL_MS : AGENT_TASK_POLL_MIN_MS,
      pushed,
      polledAtAnswer,
      poll: (options, polled) => agentCalls.pollA2aTask.executeWithOptions(options, [{ ...polled, handle }]),
    },
    attempt,
    startedAt,
  );
}

async function followedTaskEnded(
  running: RunningTask,
  followed: FollowedTask,
  attempt: number,
  startedAt: number,
): Promise<TaskOutcome> {
  const { task, inbox } = running;
  running.agent = { kind: 'runs task', task: followed.task };
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
    running.waitFor(followed.wait);
    // An agent may also report on the task (POST /tasks/{taskId}/result): its report ends the wait and the task.
    await condition(
      () =>
        inbox.report !== undefined ||
        (followed.pushed && inbox.pushArrived) ||
        (followed.polledAtAnswer && inbox.answerArrived),
      Math.min(agentTaskPollDelayMs(intervalMs ?? followed.unsuggestedMs, Date.now() - startedAt), remainingMs),
      { summary: `next poll of ${followed.name} (task ${task.taskId})` },
    );
    if (inbox.report) return outcomeOfReport(inbox.report, attempt);
    // A push or an answer during the poll below may be news the poll does not see: it ends the next wait.
    inbox.pushArrived = false;
    inbox.answerArrived = false;
    let polled: McpTaskPoll | A2aTaskPoll;
    try {
      polled = await followed.poll(
        {
          startToCloseTimeout: callActivityTimeoutMs(running),
          retry: retryPolicyOf(task),
          summary: `poll ${followed.kind}: ${describe(running)} (task ${task.taskId})`,
        },
        { taskId: task.taskId, agentId: task.agentId, attempt, keepsResult: running.keepsResult },
      );
    } catch (error) {
      if (isCancellation(error)) throw error;
      return failure(activityError(error), attempt);
    }
    if (polled.kind === 'working') {
      intervalMs = 'pollIntervalMs' in polled ? polled.pollIntervalMs : undefined;
      continue;
    }
    running.agent = { kind: 'answered', recorded: polled.recorded };
    return outcomeOfAnswer(polled);
  }
}
