import { call, type CallOptions } from './http';
import { until } from './until';

/** A run as GET /schedules/{id} lists it. */
export interface RunView {
  runId: string;
  at: string;
  taskId?: string;
  compositionId?: string;
  taskIds?: string[];
  error?: { code: string; message: string };
}

/** POST /schedules with `body`; the 201 body (throws on any other status). */
export async function createSchedule(body: Record<string, unknown>, apiKey = 'admin'): Promise<any> {
  const reply = await call('POST', '/schedules', { apiKey, body });
  if (reply.status !== 201) throw new Error(`POST /schedules answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** GET /schedules/{id} (200 expected). */
export async function readSchedule(scheduleId: string, options: Pick<CallOptions, 'apiKey'> = {}): Promise<any> {
  const reply = await call('GET', `/schedules/${scheduleId}`, { apiKey: options.apiKey ?? 'admin' });
  if (reply.status !== 200)
    throw new Error(`GET /schedules/${scheduleId} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** The schedule's recentRuns once at least `count` of them are listed (newest first). */
export function untilRuns(scheduleId: string, count: number): Promise<RunView[]> {
  return until(async () => {
    const { recentRuns } = await readSchedule(scheduleId);
    return recentRuns.length >= count ? (recentRuns as RunView[]) : undefined;
  }, `${count} runs of schedule ${scheduleId}`);
}

/** DELETE /schedules/{id} as admin, for the end of a test: no run starts after it. */
export async function deleteSchedule(scheduleId: string): Promise<void> {
  const reply = await call('DELETE', `/schedules/${scheduleId}`, { apiKey: 'admin' });
  if (reply.status !== 204) throw new Error(`DELETE /schedules/${scheduleId} answered ${reply.status}`);
}
