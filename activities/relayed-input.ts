import { setTimeout as sleep } from 'node:timers/promises';
import { TaskEventType, type TaskRef } from '../src/task-events/task-event';
import type { InputRequest } from '../src/tasks/task-document';
import { MAX_INPUT_REQUESTS } from '../src/tasks/task-inputs';
import type { TaskClaims } from '../src/tasks/task-claims';
import type { TaskStore } from '../src/tasks/task-store';
import { TaskPhase, TaskStatus } from '../workflows/task-types';

/** How often a waiting relay looks for the person's answer in the task store. */
const ANSWER_POLL_MS = 250;

/** Why a relay could not ask: the task asked MAX_INPUT_REQUESTS times already, or it ended. */
export type NotAsked = 'too many requests' | 'task ended';

/**
 * A request an agent makes during an activity (an MCP elicitation, an A2A task's input-required
 * state), relayed to a person as the task's own input request: the task is `input-required` with
 * it, and the answer a person gives (POST /tasks/{taskId}/input, checked there against the
 * request's inputSchema) is read from the task store, where the API claimed it. The workflow takes
 * no part: the activity that met the request carries the answer back to the agent.
 */
export class RelayedInput {
  constructor(
    private readonly taskStore: TaskStore,
    private readonly claims: Pick<TaskClaims, 'findInput'>,
    private readonly task: TaskRef,
  ) {}

  /** Makes the task `input-required` with `request`; why not, when it may not ask. */
  async ask(request: InputRequest): Promise<NotAsked | undefined> {
    if (((await this.taskStore.find(this.task.taskId))?.inputRequests ?? 0) >= MAX_INPUT_REQUESTS)
      return 'too many requests';
    const asked = await this.taskStore.updateIfNotEnded(this.task, {
      status: TaskStatus.INPUT_REQUIRED,
      inputRequest: request,
      event: { type: TaskEventType.INPUT_REQUIRED, ...request },
    });
    return asked ? undefined : 'task ended';
  }

  /** The answer a person gave to `requestId`, if one did. */
  answerTo(requestId: string): ReturnType<TaskClaims['findInput']> {
    return this.claims.findInput(this.task.taskId, requestId);
  }

  /**
   * Waits for the answer to `requestId` until the deadline or the signal; unanswered, the task is
   * `pending` again in `phase` (the request withdrawn), unless an answer came meanwhile.
   */
  async waitFor(
    requestId: string,
    until: { deadline: number; signal: AbortSignal; phase: TaskPhase },
  ): ReturnType<TaskClaims['findInput']> {
    while (Date.now() + ANSWER_POLL_MS < until.deadline && !until.signal.aborted) {
      const answered = await this.answerTo(requestId);
      if (answered) return answered;
      await sleep(ANSWER_POLL_MS, undefined, { signal: until.signal }).catch(() => undefined);
    }
    await this.withdraw(until.phase);
    // An answer claimed just before the task went back to pending still counts.
    return this.answerTo(requestId);
  }

  /** The task is `pending` again in `phase`: its open request is no longer to be answered. */
  async withdraw(phase: TaskPhase): Promise<void> {
    await this.taskStore.updateIfNotEnded(this.task, { status: TaskStatus.PENDING, phase });
  }
}
