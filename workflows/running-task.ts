// A task as its steps see it (report-wait.ts, input-request.ts, followed-task.ts, task-room.ts,
// task-end.ts): its plan, the run it belongs to, what it heard, and the state they move on.
// workflows/task-run.ts implements it.
import type { AgentClaim } from './task-state';
import type { TaskInbox } from './task-inbox';
import type { RecordedTask } from './activity-contract';
import type { CompositionInput, PlannedTask, TaskOutcome, TaskWait } from './task-types';

/** A task of the run, as its dependants read it. */
export interface TaskOfRun {
  readonly task: PlannedTask;
  /** Index in the composition. */
  readonly position: number;
  /** Set once the task ended, before it is recorded. */
  readonly outcome?: TaskOutcome;
}

/** What a task needs of the run it belongs to. */
export interface RunOfTask {
  readonly input: CompositionInput;
  readonly tasks: readonly TaskOfRun[];
  /** The run took the VISIBLE_AGENT_CALLS patch: regular call activity, named timers. */
  readonly visibleCalls: boolean;
  /** The run took the CALLING_PHASE_IN_CALL patch: asked once, by its first dependant that calls. */
  callingPhaseInCall(): boolean;
  /** Callbacks, notices and room frames, settled before the workflow returns. */
  readonly deliveries: Array<Promise<void>>;
  /** A task's state changed: the run's current details are drawn again. */
  changed(): void;
}

export interface RunningTask {
  readonly task: PlannedTask;
  readonly run: RunOfTask;
  readonly inbox: TaskInbox;
  /** A dependant's pending argument reads the result, or a room's task_update carries it. */
  readonly keepsResult: boolean;
  agent: AgentClaim;
  /** The step the task now waits on, as the `tasks` query shows it. */
  waitFor(wait: Exclude<TaskWait, typeof TaskWait.RECORD>): void;
}

/** The task in activity summaries: `{agent}: {operation}`. */
export const describe = ({ task }: RunningTask): string => `${task.agentName}: ${task.operation}`;

/** The task and the event log its records go to. */
export function recordedTaskOf({ task, run }: RunningTask): RecordedTask {
  const { compositionId } = run.input;
  return { taskId: task.taskId, ...(compositionId === undefined ? {} : { compositionId }) };
}
