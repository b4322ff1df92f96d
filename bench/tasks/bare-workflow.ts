// The floor Temporal itself sets: one workflow, one activity making the same agent call as the router.
import { proxyActivities } from '@temporalio/workflow';
import type { BareActivities } from './agent-call';

const { callAgentOnce } = proxyActivities<BareActivities>({ startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 1 } });

export async function bareTaskWorkflow(taskId: string): Promise<unknown> {
  return callAgentOnce(taskId);
}
