import { ApplicationFailure } from '@temporalio/activity';
import type { Dispatcher } from 'undici';
import { McpSession } from '../src/agent-calls/mcp-session';
import type { Agent } from '../src/registry/agent';
import type { RecentAgents } from '../src/registry/recent-agents';
import type { A2aTaskHandle, McpTaskHandle } from '../workflows/task-types';
import type { CancellationNotice } from '../workflows/activity-contract';
import { isRetriedStatus } from '../src/agent-calls/agent-reply';
import { answerOf } from './call-failures';
import { verdictOfA2aError } from '../src/agent-calls/a2a-call';
import { a2aRequest } from '../src/agent-calls/a2a-client';
import { postSigned } from '../src/agent-calls/signed-post';
import { verdictOrFailure } from './call-failures';
import { refusalOf } from './call-failures';
import { describeError } from '../src/ops/describe-error';
import { withoutCredentials } from '../src/util/url-credentials';

export interface NotifyCancellationSettings {
  callTimeoutMs: number;
}

/**
 * Tells the agent of a cancelled task that was awaiting its report to stop: a signed `POST mcpUrl`
 * with `{taskId, cancel: true}` to an `acs` agent, `tasks/cancel` of its MCP task to an `mcp` one,
 * `CancelTask` of its A2A task to an `a2a` one.
 * Best effort: the workflow retries it a few times and then lets go; an address the outbound guard
 * refused is not tried again.
 */
export function notifyCancellationActivity(
  agents: RecentAgents,
  dispatcher: Dispatcher,
  settings: NotifyCancellationSettings,
) {
  return async function notifyCancellation({ taskId, agentId, mcpTask, a2aTask }: CancellationNotice): Promise<void> {
    const agent = await agents.findById(agentId);
    if (!agent) return;
    if (mcpTask) return cancelMcpTask(agent, mcpTask, dispatcher, settings);
    if (a2aTask) return cancelA2aTask(agent, a2aTask, dispatcher, settings);
    let status: number;
    try {
      ({ status } = await postSigned(dispatcher, {
        url: agent.endpointUrl,
        secret: agent.signingSecret,
        messageId: `${taskId}-cancel`,
        payload: { taskId, cancel: true },
        timeoutMs: settings.callTimeoutMs,
        maxReplyBytes: 64 * 1024,
      }));
    } catch (error) {
      throw (
        refusalOf(error, 'Cancellation notice to', agent.endpointUrl) ??
        ApplicationFailure.retryable(
          withoutCredentials(`Telling ${agent.endpointUrl} of the cancellation failed: ${describeError(error)}`),
        )
      );
    }
    if (isRetriedStatus(status))
      throw ApplicationFailure.retryable(
        `${withoutCredentials(agent.endpointUrl)} answered ${status} to the cancellation`,
      );
  };
}

/** `tasks/cancel` in the session that created the MCP task, then the end of that session. */
async function cancelMcpTask(
  agent: Agent,
  handle: McpTaskHandle,
  dispatcher: Dispatcher,
  settings: NotifyCancellationSettings,
): Promise<void> {
  let session: McpSession | undefined;
  try {
    session = await McpSession.open(
      agent,
      { dispatcher, timeoutMs: settings.callTimeoutMs, maxReplyBytes: 64 * 1024 },
      handle,
    );
    await session.client.experimental.tasks.cancelTask(handle.mcpTaskId, session.requestOptions());
  } catch (error) {
    const answer = answerOf(error, 'Cancelling the MCP task at', agent.endpointUrl);
    if (answer.kind === 'retry')
      throw ApplicationFailure.retryable(
        withoutCredentials(`Cancelling the MCP task at ${agent.endpointUrl}: ${answer.reason}`),
      );
    // Any other answer settles it: a task that already ended cannot be cancelled.
  } finally {
    await session?.close();
  }
}

/** `CancelTask` of the A2A agent's task; an agent that says it cannot (it ended already) settles it too. */
async function cancelA2aTask(
  agent: Agent,
  handle: A2aTaskHandle,
  dispatcher: Dispatcher,
  settings: NotifyCancellationSettings,
): Promise<void> {
  try {
    await a2aRequest(
      agent,
      'CancelTask',
      { id: handle.a2aTaskId },
      { dispatcher, timeoutMs: settings.callTimeoutMs, maxReplyBytes: 64 * 1024 },
    );
  } catch (error) {
    const answer = verdictOrFailure(error, verdictOfA2aError, 'Cancelling the A2A task at', agent.endpointUrl);
    if (answer.kind === 'retry')
      throw ApplicationFailure.retryable(
        withoutCredentials(`Cancelling the A2A task at ${agent.endpointUrl}: ${answer.reason}`),
      );
  }
}
