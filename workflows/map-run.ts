// A map task's run in its composition: once its parents ended (and its condition held), its child
// workflow runs the items (map-workflow.ts) and records the map's outcome itself, so the task's own
// end only delivers the callbacks, reading the outcome from the task store.
import { executeChild, isCancellation } from '@temporalio/workflow';
import { MAP_CHILD_OPTIONS } from './map-children';
import { MAP_WORKFLOW, type MapWorkflow } from './map-contract';
import { failure } from './outcomes';
import type { Substitution } from './pending-arguments';
import type { RunningTask } from './running-task';
import type { AgentClaim } from './task-state';
import { TaskErrorCode, TaskWait, workflowIdOfMap, type PlannedTask, type TaskOutcome } from './task-types';

/** The map's workflow recorded its outcome: the task's end records nothing more. */
const RECORDED_BY_MAP: AgentClaim = { kind: 'answered', recorded: true };

type MapTask = PlannedTask & { forEach: NonNullable<PlannedTask['forEach']> };

/**
 * Step: the items, run by the map's child workflow in the task's own cancellation scope, so that
 * cancelling the task (or the composition) cancels the map, which records the items and itself
 * cancelled before this step ends. `substitution`: the task's params with its ordinary pending
 * arguments filled in; the items' params are checked one by one, not these.
 */
export async function mapEnded(running: RunningTask, substitution: Substitution): Promise<TaskOutcome> {
  if ('error' in substitution) return failure(substitution.error);
  const { run, keepsResult } = running;
  const task = { ...running.task, params: substitution.params } as MapTask;
  const { source } = task.forEach;
  const { compositionId, agentCallTimeoutMs } = run.input;
  const workflowId = workflowIdOfMap(task.taskId);
  running.waitFor(TaskWait.ITEMS);
  try {
    const outcome = await executeChild<MapWorkflow>(MAP_WORKFLOW, {
      workflowId,
      args: [
        {
          task,
          sourceTaskId: run.tasks[Number(source.taskId)].task.taskId,
          ...(compositionId === undefined ? {} : { compositionId }),
          agentCallTimeoutMs,
          keepsResult,
        },
      ],
      ...MAP_CHILD_OPTIONS,
      staticSummary: `Map ${task.agentName}: ${task.operation} over task ${source.taskId}'s ${source.field}`,
    });
    running.agent = RECORDED_BY_MAP;
    return outcome;
  } catch (error) {
    // Cancelled before the map's workflow started: the task's end records the cancellation.
    if (isCancellation(error)) throw error;
    return failure({
      code: TaskErrorCode.WORKFLOW_ENDED,
      message: `The map's workflow ${workflowId} ended before the map did: ${(error as Error).message}`,
    });
  }
}
