import { ApplicationFailure } from '@temporalio/activity';
import type { Agent } from '../src/registry/agent';
import type { RecentAgents } from '../src/registry/recent-agents';
import type { TaskRef } from '../src/task-events/task-event';
import type { AgentReplyVerdict } from '../src/agent-calls/agent-reply';
import { refOf } from '../src/tasks/task-document';
import type { TaskStore } from '../src/tasks/task-store';
import { isLive, TaskErrorCode, type TaskStatus } from '../workflows/task-types';
import type { AgentAnswer } from '../workflows/activity-contract';
import { recordedAnswer } from './call-agent';
import { withoutCredentials } from '../src/util/url-credentials';

/**
 * The task a poll of the agent's own task is for, and its agent: a task that already ended is not
 * polled (its outcome stands: the poll's answer would be recorded without looking again).
 */
export async function polledTask(
  taskStore: TaskStore,
  agents: RecentAgents,
  taskId: string,
  agentId: string,
): Promise<{ task: TaskRef; agent: Agent; status: TaskStatus }> {
  const stored = await taskStore.find(taskId);
  if (!stored)
    throw ApplicationFailure.nonRetryable(
      `Task ${taskId} is not in the task store`,
      TaskErrorCode.AGENT_PROTOCOL_ERROR,
    );
  if (!isLive(stored.status)) {
    throw ApplicationFailure.nonRetryable(
      `Task ${taskId} already ended ${stored.status}`,
      TaskErrorCode.AGENT_PROTOCOL_ERROR,
    );
  }
  const agent = await agents.findById(agentId);
  if (!agent) throw ApplicationFailure.nonRetryable(`Agent ${agentId} no longer exists`, TaskErrorCode.AGENT_NOT_FOUND);
  return { task: refOf(stored), agent, status: stored.status };
}

/**
 * What a poll's final verdict makes of the task: the agent's answer recorded as its outcome, like a
 * call's; trouble retried or final as a call's is. `url` names the agent in the failure's message.
 */
export async function polledAnswer(
  verdict: Exclude<AgentReplyVerdict, { kind: 'accepted' }>,
  taskStore: TaskStore,
  { task, attempt, keepsResult, url }: { task: TaskRef; attempt: number; keepsResult: boolean; url: string },
): Promise<AgentAnswer> {
  switch (verdict.kind) {
    case 'retry':
      throw ApplicationFailure.retryable(
        withoutCredentials(`Polling ${url}: ${verdict.reason}`),
        TaskErrorCode.AGENT_UNREACHABLE,
      );
    case 'refused':
      throw ApplicationFailure.nonRetryable(verdict.error.message, verdict.error.code, verdict.error.details);
    case 'completed':
    case 'failed':
      return recordedAnswer(taskStore, task, verdict, attempt, keepsResult);
  }
}
