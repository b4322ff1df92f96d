import { ApplicationFailure } from '@temporalio/activity';
import type { Dispatcher } from 'undici';
import type { RecentAgents } from '../src/registry/recent-agents';
import { isRetriedStatus } from '../src/tasks/agent-reply';
import { describeError, postSigned, refusalOf } from './signed-post';

export interface NotifyCancellationSettings {
  callTimeoutMs: number;
}

/**
 * Tells the agent of a cancelled task that was awaiting its report to stop: a signed `POST mcpUrl`
 * with `{taskId, cancel: true}`. Best effort: the workflow retries it a few times and then lets go;
 * an address the outbound guard refused is not tried again.
 */
export function notifyCancellationActivity(
  agents: RecentAgents,
  dispatcher: Dispatcher,
  settings: NotifyCancellationSettings,
) {
  return async function notifyCancellation({ taskId, agentId }: { taskId: string; agentId: string }): Promise<void> {
    const agent = await agents.findById(agentId);
    if (!agent) return;
    let status: number;
    try {
      ({ status } = await postSigned(dispatcher, {
        url: agent.mcpUrl,
        secret: agent.signingSecret,
        messageId: `${taskId}-cancel`,
        payload: { taskId, cancel: true },
        timeoutMs: settings.callTimeoutMs,
        maxReplyBytes: 64 * 1024,
      }));
    } catch (error) {
      throw (
        refusalOf(error, 'Cancellation notice to', agent.mcpUrl) ??
        ApplicationFailure.retryable(`Telling ${agent.mcpUrl} of the cancellation failed: ${describeError(error)}`)
      );
    }
    if (isRetriedStatus(status))
      throw ApplicationFailure.retryable(`${agent.mcpUrl} answered ${status} to the cancellation`);
  };
}
