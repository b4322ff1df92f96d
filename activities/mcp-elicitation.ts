import { randomUUID } from 'node:crypto';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { ElicitationAnswerer } from '../src/agent-calls/mcp-elicitation';
import { SchemaRejected } from '../src/user-schemas/compiler';
import type { SchemaChecks } from '../src/user-schemas/schema-checks';
import type { TaskRef } from '../src/task-events/task-event';
import type { InputRequest } from '../src/tasks/task-document';
import type { TaskClaims } from '../src/tasks/task-claims';
import type { TaskStore } from '../src/tasks/task-store';
import type { TaskPhase } from '../workflows/task-types';
import { RelayedInput } from './relayed-input';

/** Time left to the MCP server, after a wait that got no answer, to end its request before the call's own timeout. */
const ANSWER_MARGIN_MS = 1_000;

/**
 * The input that answers a URL-mode elicitation: the person opened the page and accepts, or
 * declines. It is the request's inputSchema, so POST /tasks/{taskId}/input checks it like any other.
 */
export const URL_CONFIRMATION_SCHEMA = {
  type: 'object',
  properties: { action: { enum: ['accept', 'decline'] } },
  required: ['action'],
  additionalProperties: false,
};

/**
 * An MCP agent's elicitation request during a call (or during a poll of its MCP task), as the
 * task's input request: the task is `input-required` while the request waits, and the answer a
 * person gives goes back to the server as the elicitation's result. The request cannot outlast the
 * call's own timeout, so the wait ends before it: unanswered, the server is told `cancel` and the
 * task is pending again, in `phase`.
 */
export class TaskElicitation implements ElicitationAnswerer {
  private readonly relay: RelayedInput;

  constructor(
    taskStore: TaskStore,
    claims: Pick<TaskClaims, 'findInput'>,
    private readonly schemas: SchemaChecks,
    task: TaskRef,
    private readonly call: { deadline: number; signal: AbortSignal; phase: TaskPhase },
  ) {
    this.relay = new RelayedInput(taskStore, claims, task);
  }

  /** A form: the person's input, checked against `requestedSchema`, is the content accepted. */
  async answer(message: string, requestedSchema: Record<string, unknown>): Promise<ElicitResult> {
    try {
      await this.schemas.compile(requestedSchema);
    } catch (error) {
      if (error instanceof SchemaRejected) return { action: 'decline' };
      throw error;
    }
    return this.resultOf({ requestId: randomUUID(), message, inputSchema: requestedSchema }, (input) => ({
      action: 'accept',
      content: input as ElicitResult['content'],
    }));
  }

  /** A page to open: the person's `{action}` (URL_CONFIRMATION_SCHEMA) is the result. */
  confirmUrl(message: string, url: string): Promise<ElicitResult> {
    return this.resultOf({ requestId: randomUUID(), message, url, inputSchema: URL_CONFIRMATION_SCHEMA }, (input) => ({
      action: (input as { action: 'accept' | 'decline' }).action,
    }));
  }

  /**
   * The result of `request`: the person's answer as `resultOf` makes it; `decline` past the task's
   * input requests, `cancel` when no answer came in time or the task ended.
   */
  private async resultOf(request: InputRequest, resultOf: (input: unknown) => ElicitResult): Promise<ElicitResult> {
    const notAsked = await this.relay.ask(request);
    if (notAsked) return { action: notAsked === 'too many requests' ? 'decline' : 'cancel' };
    const answer = await this.relay.waitFor(request.requestId, {
      ...this.call,
      deadline: this.call.deadline - ANSWER_MARGIN_MS,
    });
    return answer ? resultOf(answer.input) : { action: 'cancel' };
  }
}
