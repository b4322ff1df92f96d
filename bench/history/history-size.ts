import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** Events and encoded bytes of a workflow's history, once it closed. */
export async function historyOf(client: Client, workflowId: string): Promise<{ events: number; bytes: number }> {
  const handle = client.workflow.getHandle(workflowId);
  await handle.result().catch(() => undefined);
  const history = await handle.fetchHistory();
  return {
    events: history.events?.length ?? 0,
    bytes: temporal.api.history.v1.History.encode(history).finish().length,
  };
}
