import { call, type CallOptions, type Reply } from './http';
import { STUCK_AFTER_MS } from './until';

const TERMINAL = ['completed', 'failed', 'cancelled', 'skipped'];

/**
 * Polls GET /tasks/{taskId} until `until` holds for the task (by default: it ended), at most
 * `timeoutMs`; returns the last view either way, so the test's assertion shows what it was.
 */
export async function waitForTask(
  taskId: string,
  options: { apiKey?: string; baseUrl?: string; timeoutMs?: number; until?: (task: any) => boolean } = {},
): Promise<any> {
  const until = options.until ?? ((task: any) => TERMINAL.includes(task.status));
  const deadline = Date.now() + (options.timeoutMs ?? STUCK_AFTER_MS);
  for (;;) {
    const reply = await call('GET', `/tasks/${taskId}`, {
      apiKey: options.apiKey ?? 'admin',
      baseUrl: options.baseUrl,
    });
    if (reply.status !== 200)
      throw new Error(`GET /tasks/${taskId} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    if (until(reply.body) || Date.now() > deadline) return reply.body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A tool definition whose inputSchema is `properties` (all required). */
export function tool(name: string, properties: Record<string, unknown> = {}, required = Object.keys(properties)) {
  return { name, description: `test tool ${name}`, inputSchema: { type: 'object', properties, required } };
}

/** POST /tasks as admin with `body`; the new task's id (202 expected). */
export async function startTask(body: Record<string, unknown>): Promise<string> {
  const reply = await call('POST', '/tasks', { apiKey: 'admin', body });
  expect(reply.status).toBe(202);
  return reply.body.taskId as string;
}

/** POST /tasks/{taskId}/result with `apiKey` (the agent's, usually): the agent's report, as the service answered it. */
export function reportOn(taskId: string, apiKey: string, body: Record<string, unknown>): Promise<Reply> {
  return call('POST', `/tasks/${taskId}/result`, { apiKey, body });
}

/** POST /tasks/compose as admin with `body` (202 expected): the composition's id and its tasks' ids in input order. */
export async function composeTasks(
  body: unknown[],
  options: Pick<CallOptions, 'baseUrl'> = {},
): Promise<{ compositionId: string; taskIds: string[] }> {
  const reply = await call('POST', '/tasks/compose', { apiKey: 'admin', body, baseUrl: options.baseUrl });
  if (reply.status !== 202)
    throw new Error(`POST /tasks/compose answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return {
    compositionId: reply.body[0].compositionId,
    taskIds: reply.body.map((element: { taskId: string }) => element.taskId),
  };
}
