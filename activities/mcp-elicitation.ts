import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { ElicitationAnswerer } from '../src/agent-calls/mcp-elicitation';
import { SchemaRejected } from '../src/user-schemas/compiler';
import type { SchemaChecks } from '../src/user-schemas/schema-checks';
import { TaskEventType, type TaskRef } from '../src/task-events/task-event';
import { MAX_INPUT_REQUESTS } from '../src/tasks/task-inputs';
import type { TaskClaims } from '../src/tasks/task-claims';
import type { TaskStore } from '../src/tasks/task-store';
import { TaskPhase, TaskStatus } from '../workflows/task-types';

/** How often the call looks for the person's answer in the task store. */
const ANSWER_POLL_MS = 250;
/** Time left to the MCP server, after a wait that got no answer, to end its call before the call's own timeout. */
const ANSWER_MARGIN_MS = 1_000;

/**
 * An MCP agent's elicitation request during a call, as the task's input request: the task is
 * `input-required` while the call waits, and the answer a person gives (POST /tasks/{taskId}/input,
 * checked against the requested schema) goes back to the server as the elicitation's result. The
 * call cannot outlast its own timeout, so the wait ends before it: unanswered, the server is told
 * `cancel` and the task is pending again.
 */
export class TaskElicitation implements ElicitationAnswerer {
  constructor(
    private readonly taskStore: TaskStore,
    private readonly claims: Pick<TaskClaims, 'findInput'>,
    private readonly schemas: SchemaChecks,
    private readonly task: TaskRef,
    private readonly call: { deadline: number; signal: AbortSignal },
  ) {}

  async answer(message: string, requestedSchema: Record<string, unknown>): Promise<ElicitResult> {
    const { taskId } = this.task;
    try {
      await this.schemas.compile(requestedSchema);
    } catch (error) {
      if (error instanceof SchemaRejected) return { action: 'decline' };
      throw error;
    }
    if (((await this.taskStore.find(taskId))?.inputRequests ?? 0) >= MAX_INPUT_REQUESTS) return { action: 'decline' };
    const request = { requestId: randomUUID(), message, inputSchema: requestedSchema };
    const asked = await this.taskStore.updateIfNotEnded(this.task, {
      status: TaskStatus.INPUT_REQUIRED,
      inputRequest: request,
      event: { type: TaskEventType.INPUT_REQUIRED, ...request },
    });
    if (!asked) return { action: 'cancel' };
    const answered = await this.answerTo(request.requestId);
    if (answered) return answered;
    await this.taskStore.updateIfNotEnded(this.task, { status: TaskStatus.PENDING, phase: TaskPhase.CALLING_AGENT });
    // An answer claimed just before the task went back to pending still counts.
    return (await this.found(request.requestId)) ?? { action: 'cancel' };
  }

  private async answerTo(requestId: string): Promise<ElicitResult | undefined> {
    while (Date.now() + ANSWER_POLL_MS + ANSWER_MARGIN_MS < this.call.deadline && !this.call.signal.aborted) {
      const answered = await this.found(requestId);
      if (answered) return answered;
      await sleep(ANSWER_POLL_MS, undefined, { signal: this.call.signal }).catch(() => undefined);
    }
    return undefined;
  }

  private async found(requestId: string): Promise<ElicitResult | undefined> {
    const answer = await this.claims.findInput(this.task.taskId, requestId);
    return answer && { action: 'accept', content: answer.input as ElicitResult['content'] };
  }
}
