import { errorCodeLabel, type Metrics } from '../ops/metrics';
import { TaskEventType } from '../task-events/task-event';
import { TaskStatus } from '../../workflows/task-types';
import { endsTask, type NewTask, type TaskChange, type TaskDocument } from './task-document';

/** What creating tasks tells the metrics: one count per task, and a composition's size. */
export function countCreated(
  metrics: Metrics,
  tasks: Array<Pick<NewTask, 'operation'>>,
  inComposition: boolean,
  kind = inComposition ? 'composition' : 'task',
): void {
  for (const task of tasks) metrics.tasks.created.inc({ operation: task.operation, kind });
  if (inComposition) metrics.tasks.compositionSize.observe(tasks.length);
}

/**
 * What a write that ended a task, asked for input or answered it tells the metrics, from the task as
 * the write left it: the waits are measured to its `updatedAt`.
 */
export function countWritten(metrics: Metrics, change: TaskChange, written: TaskDocument): void {
  const { tasks, agent } = metrics;
  const now = written.updatedAt.getTime();
  const operation = written.operation;
  if (endsTask(change)) {
    // A skipped task is labelled with why it was skipped.
    const code = errorCodeLabel(change.error ?? change.skipReason);
    tasks.ended.inc({ operation, status: written.status, code, ...agent(written.agentId) });
    if (written.acceptedAt) {
      const outcome = code || written.status;
      tasks.reportWait.observe(
        { operation, outcome, ...agent(written.agentId) },
        (now - written.acceptedAt.getTime()) / 1000,
      );
    }
  } else if (change.status === TaskStatus.INPUT_REQUIRED) {
    tasks.inputRequests.inc({ operation });
  } else if (change.event?.type === TaskEventType.INPUT_RECEIVED && written.inputRequestedAt) {
    tasks.inputWait.observe({ operation }, (now - written.inputRequestedAt.getTime()) / 1000);
  }
}
