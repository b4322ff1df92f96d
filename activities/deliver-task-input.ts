import { ApplicationFailure } from '@temporalio/activity';
import type { Dispatcher } from 'undici';
import type { RecentAgents } from '../src/registry/recent-agents';
import { isRetriedStatus } from '../src/agent-calls/agent-reply';
import type { TaskClaims } from '../src/tasks/task-claims';
import { describeError } from '../src/ops/describe-error';
import { TaskErrorCode } from '../workflows/task-types';
import type { TaskInputDelivery } from '../workflows/activity-contract';
import { postSigned } from '../src/agent-calls/signed-post';
import { refusalOf } from './call-failures';
import { withoutCredentials } from '../src/util/url-credentials';

export interface DeliverTaskInputSettings {
  callTimeoutMs: number;
}

/**
 * The answer to an agent's input request, as a signed `POST mcpUrl` with `{taskId, operation,
 * requestId, input}` (its `webhook-id` the same for every attempt). The input is read from the task
 * store, where the API claimed it, so that the workflow's history never holds it. A 2xx reply takes
 * it; 408, 429, 5xx and network trouble are retried; any other reply is the agent's refusal, final.
 */
export function deliverTaskInputActivity(
  agents: RecentAgents,
  claims: TaskClaims,
  dispatcher: Dispatcher,
  settings: DeliverTaskInputSettings,
) {
  return async function deliverTaskInput({ taskId, agentId, operation, requestId }: TaskInputDelivery): Promise<void> {
    const agent = await agents.findById(agentId);
    if (!agent)
      throw ApplicationFailure.nonRetryable(`Agent ${agentId} no longer exists`, TaskErrorCode.AGENT_NOT_FOUND);
    const input = await claims.answeredInput(taskId, requestId);
    let status: number;
    try {
      ({ status } = await postSigned(dispatcher, {
        url: agent.endpointUrl,
        secret: agent.signingSecret,
        messageId: `${taskId}-input-${requestId}`,
        payload: { taskId, operation, requestId, input },
        timeoutMs: settings.callTimeoutMs,
        maxReplyBytes: 64 * 1024,
      }));
    } catch (error) {
      throw (
        refusalOf(error, 'Input delivery to', agent.endpointUrl, TaskErrorCode.AGENT_URL_REFUSED) ??
        ApplicationFailure.retryable(
          withoutCredentials(`Delivering the input to ${agent.endpointUrl} failed: ${describeError(error)}`),
          TaskErrorCode.AGENT_UNREACHABLE,
        )
      );
    }
    if (status >= 200 && status < 300) return;
    if (isRetriedStatus(status))
      throw ApplicationFailure.retryable(
        `${withoutCredentials(agent.endpointUrl)} answered ${status} to the input`,
        TaskErrorCode.AGENT_UNREACHABLE,
      );
    throw ApplicationFailure.nonRetryable(
      `${withoutCredentials(agent.endpointUrl)} refused the input with ${status}`,
      TaskErrorCode.AGENT_REJECTED,
    );
  };
}
