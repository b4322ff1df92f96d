/** A2A methods that only read a task: a caller's limits count them as reads, as they count GET. */
const READ_METHODS: ReadonlySet<string> = new Set(['GetTask', 'ListTasks', 'SubscribeToTask']);

const ENDPOINT_PATH = /^\/a2a\/[^/]+\/?$/;

/** Whether a request is a JSON-RPC call of the A2A endpoint to a method that only reads. */
export function isA2aRead(request: { method: string; path: string; body?: unknown }): boolean {
  if (request.method !== 'POST' || !ENDPOINT_PATH.test(request.path)) return false;
  const body = request.body;
  if (typeof body !== 'object' || body === null || !('method' in body)) return false;
  return typeof body.method === 'string' && READ_METHODS.has(body.method);
}
