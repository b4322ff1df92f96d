import { WorkflowNotFoundError } from '@temporalio/common';
import type { Logger } from '../ops/logger';
import { agentSocketLostSignal } from '../../workflows/task-types';
import type { TemporalHandle } from '../tasks/temporal-client';

const keyOf = (roomId: string, agentId: string): string => `${roomId}|${agentId}`;

/**
 * The tasks this process gave an agent over its room socket and not yet seen end: when the agent's
 * last connection to the room closes, their workflows are told, and call the agent over HTTP.
 */
export class DeliveredTasks {
  /** roomId|agentId → taskId → workflowId. */
  private readonly open = new Map<string, Map<string, string>>();

  constructor(
    private readonly temporal: TemporalHandle,
    private readonly logger: Logger,
  ) {}

  delivered(roomId: string, agentId: string, taskId: string, workflowId: string): void {
    const key = keyOf(roomId, agentId);
    const tasks = this.open.get(key) ?? new Map<string, string>();
    tasks.set(taskId, workflowId);
    this.open.set(key, tasks);
  }

  ended(roomId: string, agentId: string, taskId: string): void {
    const key = keyOf(roomId, agentId);
    const tasks = this.open.get(key);
    tasks?.delete(taskId);
    if (tasks?.size === 0) this.open.delete(key);
  }

  /** The agent left the room here: a task that already ended ignores the signal (its workflow may be gone). */
  agentLeft(roomId: string, agentId: string): void {
    const key = keyOf(roomId, agentId);
    const tasks = this.open.get(key);
    if (!tasks) return;
    this.open.delete(key);
    for (const [taskId, workflowId] of tasks) {
      this.temporal.client.workflow
        .getHandle(workflowId)
        .signal(agentSocketLostSignal, taskId)
        .catch((error: unknown) => {
          if (!(error instanceof WorkflowNotFoundError))
            this.logger.warn({ err: error, taskId }, 'could not tell the workflow the agent left');
        });
    }
  }
}
