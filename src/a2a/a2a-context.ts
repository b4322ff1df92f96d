import type { Principal } from '../auth/principal';
import type { TaskDocument } from '../tasks/task-document';
import type { TaskStore } from '../tasks/task-store';
import { TaskStatus } from '../../workflows/task-types';
import { idsOf } from './a2a-task';
import { JsonRpcCode, JsonRpcError } from './json-rpc';
import type { SendMessageParams } from './method-params';

/**
 * Where a message goes: the task whose input request it answers, the task it answered already (sent
 * again), or a new task in a context (the new task's own when none).
 */
export type MessageTarget = { answers: TaskDocument } | { answered: TaskDocument } | { startsIn: string | undefined };

/** What finding a message's target reads, for the caller. */
export interface TargetReads {
  taskStore: Pick<TaskStore, 'findLastInContext'>;
  /** A task the caller may act on, or its refusal (-32001). */
  readTask(taskId: string): Promise<TaskDocument>;
  /** Whether the message started a task already. */
  started(): Promise<boolean>;
  /** The task whose input request the message answered already. */
  answered(): Promise<string | undefined>;
}

/**
 * A2A 1.0's contexts (§3.4): a message that names a task continues it, and a context it names must
 * be that task's. A message that names only a context answers the input request of the context's
 * last task when that one asks for input, and otherwise starts a new task in it. A context is the
 * caller's own: only the tasks the caller sent in it, to this agent, are in it for that caller.
 * A message sent again (its answer lost) does again nothing new: one that started a task answers
 * with it, as any repeat does, even when that task asks for input since; one that answered a
 * request answers with that task.
 */
export async function targetOf(
  reads: TargetReads,
  principal: Principal,
  agentId: string,
  { taskId, contextId }: SendMessageParams['message'],
): Promise<MessageTarget> {
  if (taskId) return (await answeredBefore(reads)) ?? { answers: await taskInContext(reads, taskId, contextId) };
  if (!contextId) return { startsIn: undefined };
  const repeat = await answeredBefore(reads);
  if (repeat) return repeat;
  const last = await reads.taskStore.findLastInContext(agentId, contextId, principal);
  const answers = last?.status === TaskStatus.INPUT_REQUIRED && !(await reads.started());
  return answers ? { answers: last } : { startsIn: contextId };
}

/** The task the message answered already, when it is sent again. */
async function answeredBefore(reads: TargetReads): Promise<MessageTarget | undefined> {
  const taskId = await reads.answered();
  return taskId === undefined ? undefined : { answered: await reads.readTask(taskId) };
}

/** The task a message names, which must be in the context the message names, if any. */
async function taskInContext(reads: TargetReads, taskId: string, contextId: string | undefined): Promise<TaskDocument> {
  const task = await reads.readTask(taskId);
  if (contextId && contextId !== idsOf(task).contextId)
    throw new JsonRpcError(
      JsonRpcCode.INVALID_PARAMS,
      `Task ${taskId} is not in context ${contextId}: leave contextId out, or send the task's`,
      { metadata: { taskId, contextId } },
    );
  return task;
}
