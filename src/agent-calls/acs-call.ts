import type { Dispatcher } from 'undici';
import type { AgentEndpoint } from './agent-endpoint';
import { interpretAgentReply, type AgentReplyVerdict } from './agent-reply';
import { postSigned } from './signed-post';

/** What the service sends an `acs` agent: the task's id, its operation and params. */
export interface AcsTaskPayload {
  taskId: string;
  operation: string;
  params: Record<string, unknown>;
}

/**
 * One signed `POST` of the service's own protocol to the agent's endpoint, and what its reply means.
 * `messageId` names the attempt, so that a receiver tells a redelivery from a new call. Network
 * trouble and the outbound guard's refusal are thrown.
 */
export async function callOverAcs(
  dispatcher: Dispatcher,
  agent: AgentEndpoint & { signingSecret: string },
  payload: AcsTaskPayload,
  messageId: string,
  call: { timeoutMs: number; maxReplyBytes: number; signal: AbortSignal },
): Promise<{ verdict: AgentReplyVerdict; status: number }> {
  const { status, text } = await postSigned(dispatcher, {
    url: agent.endpointUrl,
    secret: agent.signingSecret,
    messageId,
    payload,
    ...call,
  });
  return { verdict: interpretAgentReply(status, text), status };
}
