// One workflow per composition; a single task is a composition of one. Tasks form a DAG through
// `parents`: each starts the moment its parents ended, independent ones run concurrently.
import {
  allHandlersFinished,
  CancellationScope,
  CancelledFailure,
  condition,
  patched,
  setCurrentDetails,
} from '@temporalio/workflow';
import type { CompositionInput, PlannedTask, TaskStatus } from './task-types';
import { detailsOf, LiveDetails } from './live-details';
import { pendingArgumentsOf } from './pending-arguments';
import type { RunOfTask } from './running-task';
import { listenToTasks } from './task-messages';
import { TaskRun } from './task-run';
import { CALLING_PHASE_IN_CALL, VISIBLE_AGENT_CALLS } from './versions';

export interface CompositionSummary {
  tasks: Array<{ taskId: string; status: TaskStatus }>;
}

// Not async itself: every promise a workflow creates costs a captured stack (the SDK's stack-trace
// query), and this one would only pass execute()'s on.
export function compositionWorkflow(input: CompositionInput): Promise<CompositionSummary> {
  const run = new CompositionRun(input);
  run.listen();
  return run.execute();
}

/** The state of one run: its tasks, and what must be delivered before it returns. */
class CompositionRun implements RunOfTask {
  readonly visibleCalls = patched(VISIBLE_AGENT_CALLS);
  readonly deliveries: Array<Promise<void>> = [];
  readonly tasks: TaskRun[];
  private readonly byId: Map<string, TaskRun>;
  private phaseInCall?: boolean;
  /** No task of the run waits for a local activity's answer before its call: see callingPhaseInCall. */
  private readonly callsFollowEvents: boolean;
  private readonly details = new LiveDetails(
    () => detailsOf(this.tasks.map((task) => task.progress())),
    setCurrentDetails,
  );

  constructor(readonly input: CompositionInput) {
    const kept = resultsTheWorkflowNeeds(input.tasks);
    this.tasks = input.tasks.map((task, position) => new TaskRun(task, position, this, kept.has(task.taskId)));
    this.byId = new Map(this.tasks.map((task) => [task.task.taskId, task]));
    this.callsFollowEvents = input.tasks.every(
      (task) => task.when === undefined && task.forEach === undefined && pendingArgumentsOf(task.params).length === 0,
    );
    this.changed();
  }

  listen(): void {
    listenToTasks({
      taskOf: (taskId) => this.byId.get(taskId),
      cancel: (taskId) => this.byId.get(taskId)!.cancel(),
      progress: () => this.tasks.map((task) => task.progress()),
    });
  }

  async execute(): Promise<CompositionSummary> {
    // Cancelling the whole workflow (an operator, in the Web UI or CLI) cancels every task still running.
    const root = CancellationScope.current();
    // No promise is spent on a Promise.all of one task, the usual workflow, or of no deliveries.
    await (this.tasks.length === 1 ? this.tasks[0].live() : Promise.all(this.tasks.map((task) => task.live())));
    if (this.deliveries.length > 0) await Promise.all(this.deliveries);
    // A cancelTask update answers once its task is recorded, which may be the last thing of the run.
    if (this.visibleCalls && !allHandlersFinished()) await condition(allHandlersFinished);
    // Shown as Canceled in the Web UI, like the tasks it cut short.
    if (root.consideredCancelled)
      throw new CancelledFailure('Workflow cancelled: its tasks still running were cancelled');
    return { tasks: this.tasks.map((task) => ({ taskId: task.task.taskId, status: task.outcome!.status })) };
  }

  callingPhaseInCall(): boolean {
    // Only where every task's call follows history events (an activity's end, a signal), never a
    // local activity's answer (a condition or params checked): on replay the local activities of
    // a workflow task all answer in one activation, so a call scheduled after one answer could
    // change places with the commands that follow another, where a recordTask before each call
    // keeps them in step. Kept once asked: patched() asked again later in a run that began without
    // the patch would take it up from then on, and its dependants would move two ways.
    return (this.phaseInCall ??= this.callsFollowEvents && patched(CALLING_PHASE_IN_CALL));
  }

  changed(): void {
    this.details.changed();
  }
}

/**
 * The tasks whose result the workflow needs: a dependant's pending argument or condition reads it,
 * or a room's task_update carries it. The others' results stay out of the history (CallAgentResult); so
 * does a map's array, which its activities read from the task store (forEach is not a param).
 */
function resultsTheWorkflowNeeds(tasks: PlannedTask[]): Set<string> {
  const needed = new Set(tasks.filter((task) => task.room !== undefined).map((task) => task.taskId));
  for (const task of tasks) {
    for (const [, argument] of pendingArgumentsOf(task.params))
      needed.add(tasks[Number(argument.source.taskId)].taskId);
    if (task.when !== undefined) needed.add(tasks[Number(task.when.source.taskId)].taskId);
  }
  return needed;
}
