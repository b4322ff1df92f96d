// The signals, update and query that reach a workflow's tasks by taskId, as the API sends them
// (src/tasks/): the composition's tasks, and the items of a map's chunk.
import { setHandler } from '@temporalio/workflow';
import type { TaskRun } from './task-run';
import {
  a2aTaskPushedSignal,
  agentReportSignal,
  agentSocketLostSignal,
  cancelTaskUpdate,
  inputAnsweredSignal,
  inputRequestedSignal,
  tasksQuery,
  type TaskProgress,
  type TaskStatus,
} from './task-types';

/** What a workflow answers its tasks' messages with. */
export interface TaskMessages {
  /** The task of this workflow, found by its id; signals for another are ignored. */
  taskOf(taskId: string): TaskRun | undefined;
  /** The cancelTask update, for a task of this workflow (its validator refuses any other). */
  cancel(taskId: string): Promise<TaskStatus>;
  progress(): TaskProgress[];
}

export function listenToTasks(run: TaskMessages): void {
  setHandler(agentReportSignal, (report) => run.taskOf(report.taskId)?.reported(report));
  setHandler(agentSocketLostSignal, (taskId) => run.taskOf(taskId)?.socketClosed());
  setHandler(a2aTaskPushedSignal, (taskId) => run.taskOf(taskId)?.a2aTaskPushed());
  setHandler(inputRequestedSignal, (request) => run.taskOf(request.taskId)?.inputRequested(request));
  setHandler(inputAnsweredSignal, (answer) => run.taskOf(answer.taskId)?.inputAnswered(answer));
  setHandler(cancelTaskUpdate, (taskId) => run.cancel(taskId), {
    validator: (taskId: string) => {
      if (run.taskOf(taskId) === undefined) throw new Error(`Task ${taskId} is not part of this workflow`);
    },
  });
  setHandler(tasksQuery, () => run.progress());
}
