// The floor Temporal itself sets: one workflow, one activity making the same agent call as the service.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { BareActivities } from './agent-call';

const callOptions = { startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 1 } } as const;
const { callAgentOnce } = proxyActivities<BareActivities>(callOptions);
const local = proxyLocalActivities<BareActivities>(callOptions);

/** (b): the call as a regular activity, the primitive the service uses. */
export async function bareTaskWorkflow(taskId: string): Promise<unknown> {
  return callAgentOnce(taskId);
}

/** (b′): the call as a local activity, Temporal's cheapest way to make it, for reference. */
export async function bareLocalTaskWorkflow(taskId: string): Promise<unknown> {
  return local.callAgentOnce(taskId);
}
