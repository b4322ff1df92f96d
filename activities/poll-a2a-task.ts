import { Context } from '@temporalio/activity';
import type { Dispatcher } from 'undici';
import { a2aRequest } from '../src/agent-calls/a2a-client';
import type { RecentAgents } from '../src/registry/recent-agents';
import type { TaskStore } from '../src/tasks/task-store';
import type { TaskClaims } from '../src/tasks/task-claims';
import { a2aInputRequestOf, type A2aInputRequest } from '../src/agent-calls/a2a-input';
import { TaskPhase, TaskStatus } from '../workflows/task-types';
import { RelayedInput } from './relayed-input';
import { relayA2aInput } from './a2a-input-relay';
import type { A2aTaskPoll, PollA2aTaskInput } from '../workflows/activity-contract';
import type { CallAgentSettings } from './call-agent';
import { verdictOfA2aError, verdictOfTask, type A2aCallVerdict, type A2aTaskJson } from '../src/agent-calls/a2a-call';
import { polledAnswer, polledTask } from './polled-task';
import { verdictOrFailure } from './call-failures';

/**
 * One poll of a task an A2A agent goes on with: `GetTask`, and once it ended its outcome recorded as
 * the task's, like a call's answer. A task waiting for input has its request relayed to a person,
 * and the answer relayed back (relayA2aInput). Failures are retried or final as a call's are.
 */
export function pollA2aTaskActivity(
  agents: RecentAgents,
  taskStore: TaskStore,
  claims: Pick<TaskClaims, 'findInput' | 'inputDelivered'>,
  dispatcher: Dispatcher,
  { callTimeoutMs, maxReplyBytes }: CallAgentSettings,
) {
  return async function pollA2aTask({
    taskId,
    agentId,
    handle,
    attempt,
    keepsResult,
  }: PollA2aTaskInput): Promise<A2aTaskPoll> {
    const { task, agent, status } = await polledTask(taskStore, agents, taskId, agentId);
    let verdict: A2aCallVerdict;
    let asked: A2aInputRequest | undefined;
    const options = {
      dispatcher,
      timeoutMs: callTimeoutMs,
      maxReplyBytes,
      signal: Context.current().cancellationSignal,
    };
    try {
      const answer = (await a2aRequest(
        agent,
        'GetTask',
        { id: handle.a2aTaskId, historyLength: 0 },
        options,
      )) as A2aTaskJson;
      asked = a2aInputRequestOf(answer);
      verdict = asked ? await relayA2aInput({ taskStore, claims }, agent, task, asked, options) : verdictOfTask(answer);
    } catch (error) {
      verdict = verdictOrFailure(error, verdictOfA2aError, 'Polling', agent.endpointUrl);
    }
    if (verdict.kind === 'a2aTask') {
      // The agent went on without the answer to the request it made: no one is to answer it now.
      if (!asked && status === TaskStatus.INPUT_REQUIRED)
        await new RelayedInput(taskStore, claims, task).withdraw(TaskPhase.AWAITING_AGENT_REPORT);
      return { kind: 'working' };
    }
    return polledAnswer(verdict, taskStore, { task, attempt, keepsResult, url: agent.endpointUrl });
  };
}
