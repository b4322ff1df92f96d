// A task's state in its workflow, as two values: its stage (the step it waits on, its call, its end)
// and what its agent owes it. What the `tasks` query shows derives from the stage: `waitingFor`
// (TaskWait) and `status` (TaskStatus). The phase the task store keeps for a pending task (TaskPhase)
// is written by the steps and the activities, and never read here.
import type { CancellationScope } from '@temporalio/workflow';
import { TaskStatus, TaskWait, type A2aTaskHandle, type McpTaskHandle, type TaskOutcome } from './task-types';

export type TaskStage =
  /** A step runs; the query shows what it waits for. */
  | { readonly kind: 'waiting'; readonly waitingFor: Exclude<TaskWait, typeof TaskWait.RECORD> }
  /** The agent call runs in `scope`: the agent's report ends it by cancelling the scope. */
  | { readonly kind: 'calling'; readonly scope: CancellationScope }
  /** The outcome is decided, so dependants may go on, and is being recorded. */
  | { readonly kind: 'ended'; readonly outcome: TaskOutcome }
  /** The outcome is in the task store: a cancellation's update may answer. */
  | { readonly kind: 'recorded'; readonly outcome: TaskOutcome };

export const waitingFor = (waiting: Exclude<TaskWait, typeof TaskWait.RECORD>): TaskStage => ({
  kind: 'waiting',
  waitingFor: waiting,
});

/** What the task waits for, as the `tasks` query shows it; nothing once its outcome is recorded. */
export function waitingForOf(stage: TaskStage): TaskWait | undefined {
  switch (stage.kind) {
    case 'waiting':
      return stage.waitingFor;
    case 'calling':
      return TaskWait.AGENT_CALL;
    case 'ended':
      return TaskWait.RECORD;
    case 'recorded':
      return undefined;
  }
}

/** The status as the task store and its event log have it: input-required while a person's input is awaited. */
export function statusOf(stage: TaskStage): TaskStatus {
  if (stage.kind === 'recorded') return stage.outcome.status;
  return stage.kind === 'waiting' && stage.waitingFor === TaskWait.INPUT
    ? TaskStatus.INPUT_REQUIRED
    : TaskStatus.PENDING;
}

/** A task an agent goes on with on its side, which the workflow polls: cancelled at the agent should this task end without its answer. */
export type AgentTask = { mcpTask: McpTaskHandle } | { a2aTask: A2aTaskHandle };

/** What the agent owes the task, which decides whether it is told to stop when the task ends. */
export type AgentClaim =
  /** Not taken yet, or given back: the agent's room socket closed before it took the task. */
  | { readonly kind: 'none' }
  /** The agent took the task and owes a report: told when the task is cancelled. */
  | { readonly kind: 'owes report' }
  /** The agent runs a task of its own for this one: told to cancel it when this task ends any other way than by its answer. */
  | { readonly kind: 'runs task'; readonly task: AgentTask }
  /** The agent answered; `recorded`: its call (or poll) recorded the answer as the task's outcome. */
  | { readonly kind: 'answered'; readonly recorded: boolean };

export const NOT_TAKEN: AgentClaim = { kind: 'none' };
export const OWES_REPORT: AgentClaim = { kind: 'owes report' };

/** The call (or the poll of the agent's task) recorded the agent's answer: its record stands. */
export const recordedByCall = (claim: AgentClaim): boolean => claim.kind === 'answered' && claim.recorded;

/**
 * The agent's task to cancel (`{}` for a report it owes) when the task ended with `status`: a task
 * awaiting a report is told only of a cancellation; the agent's own task is cancelled at any end
 * but its answer, a timeout too.
 */
export function stopOf(claim: AgentClaim, status: TaskStatus): AgentTask | Record<string, never> | undefined {
  if (claim.kind === 'runs task') return claim.task;
  return claim.kind === 'owes report' && status === TaskStatus.CANCELLED ? {} : undefined;
}
