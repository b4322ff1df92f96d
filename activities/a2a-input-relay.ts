import { a2aRequest, type A2aRequestOptions } from '../src/agent-calls/a2a-client';
import { a2aInputMessage, type A2aInputRequest } from '../src/agent-calls/a2a-input';
import { verdictOfTask, type A2aCallVerdict, type A2aTaskJson } from '../src/agent-calls/a2a-call';
import type { AgentEndpoint } from '../src/agent-calls/agent-endpoint';
import type { TaskClaims } from '../src/tasks/task-claims';
import type { TaskStore } from '../src/tasks/task-store';
import type { TaskRef } from '../src/task-events/task-event';
import { MAX_INPUT_REQUESTS } from '../src/tasks/task-inputs';
import { TaskErrorCode, TaskStatus } from '../workflows/task-types';
import { inputRequestOf } from '../src/tasks/task-document';
import { RelayedInput } from './relayed-input';

/**
 * One poll's part in relaying an A2A agent's request for input (its task in TASK_STATE_INPUT_REQUIRED
 * or TASK_STATE_AUTH_REQUIRED) to a person. A request the task does not show yet becomes its input
 * request; once a person answered it (POST /tasks/{taskId}/input), the answer goes to the agent as
 * a message in its task and context, once. The agent's task is followed on either way: its next
 * state comes with the next poll, or with the answer's reply.
 */
export async function relayA2aInput(
  deps: { taskStore: TaskStore; claims: Pick<TaskClaims, 'findInput' | 'inputDelivered'> },
  agent: AgentEndpoint,
  task: TaskRef,
  asked: A2aInputRequest,
  options: A2aRequestOptions,
): Promise<A2aCallVerdict> {
  const following: A2aCallVerdict = { kind: 'a2aTask', handle: { a2aTaskId: asked.a2aTaskId } };
  const { requestId } = asked.request;
  const relay = new RelayedInput(deps.taskStore, deps.claims, task);
  const answer = await relay.answerTo(requestId);
  if (!answer) {
    const stored = await deps.taskStore.find(task.taskId);
    const open = stored?.status === TaskStatus.INPUT_REQUIRED ? inputRequestOf(stored) : undefined;
    if (open?.requestId === requestId) return following;
    const notAsked = await relay.ask(asked.request);
    if (notAsked !== 'too many requests') return following;
    return {
      kind: 'failed',
      error: {
        code: TaskErrorCode.AGENT_REJECTED,
        message: `The A2A agent asked for input more than ${MAX_INPUT_REQUESTS} times: ${asked.request.message.slice(0, 1_000)}`,
      },
    };
  }
  // The agent has not moved on from a request it got the answer to: the next poll looks again.
  if (answer.delivered) return following;
  const reply = (await a2aRequest(
    agent,
    'SendMessage',
    {
      message: a2aInputMessage(task.taskId, asked, answer.input),
      configuration: { returnImmediately: true, acceptedOutputModes: ['application/json', 'text/plain'] },
    },
    options,
  )) as { task?: A2aTaskJson };
  await deps.claims.inputDelivered(task.taskId, requestId);
  return reply.task === undefined ? following : verdictOfTask(reply.task);
}
