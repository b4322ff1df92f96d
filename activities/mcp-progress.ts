import { log } from '@temporalio/activity';
import { describeError } from '../src/ops/describe-error';
import type { TaskStore } from '../src/tasks/task-store';
import type { McpProgress } from '../src/agent-calls/mcp-call';
import { TaskEventType, type TaskRef } from '../src/task-events/task-event';

/**
 * The task's `progress` and `message` from an MCP call's progress notifications: one write at a
 * time, the latest news in the next, so a chatty server costs no more writes than the store takes.
 * Each write is a progress event. Best effort, and only until the task ended.
 */
export class ProgressWrites {
  private latest?: McpProgress;
  private writing?: Promise<void>;
  private closed = false;

  constructor(
    private readonly taskStore: TaskStore,
    private readonly task: TaskRef,
  ) {}

  readonly record = (progress: McpProgress): void => {
    if (this.closed) return;
    this.latest = { ...this.latest, ...progress };
    this.writing ??= this.writeAll();
  };

  /**
   * Takes no more news, and waits for the write under way. The call's outcome is recorded after
   * this: a progress write that read the task while pending and landed later would put it back to
   * pending, as an update is not atomic on every store (src/store/mongo.ts).
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.writing;
  }

  private async writeAll(): Promise<void> {
    while (this.latest) {
      const change = this.latest;
      this.latest = undefined;
      const event = { type: TaskEventType.PROGRESS, ...change };
      await this.taskStore.updateIfNotEnded(this.task, { ...change, event }).catch((error: unknown) => {
        log.warn('Recording MCP progress failed', { taskId: this.task.taskId, error: describeError(error) });
      });
    }
    this.writing = undefined;
  }
}
