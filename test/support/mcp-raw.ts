// Raw Streamable HTTP requests to the service's `/mcp`, for what the SDK's client does not let a test send.
import { testStack } from './test-stack';

const PROTOCOL = '2025-11-25';

/** The raw headers of a request in session `sessionId`. */
export const inSession = (sessionId: string, more: Record<string, string> = {}) => ({
  'x-api-key': testStack().adminKey,
  'mcp-session-id': sessionId,
  'mcp-protocol-version': PROTOCOL,
  ...more,
});

/** A session opened with a raw initialize on `baseUrl`: its id. */
export async function openSession(baseUrl: string): Promise<string> {
  const reply = await fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      'x-api-key': testStack().adminKey,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  expect(reply.status).toBe(200);
  await reply.text();
  return reply.headers.get('mcp-session-id')!;
}

/** The SSE events of `text`: each with its id and parsed data (a priming event's data is empty). */
export function eventsOf(text: string): Array<{ id?: string; data?: any }> {
  return text
    .split('\n\n')
    .filter((block) => block.includes('data:') || block.includes('id:'))
    .map((block) => {
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.+)$/m.exec(block)?.[1];
      return { ...(id ? { id } : {}), ...(data ? { data: JSON.parse(data) } : {}) };
    });
}

/** A JSON-RPC message POSTed raw to `/mcp` in session `sessionId`, as a client that accepts streams sends it. */
export function postInSession(
  baseUrl: string,
  sessionId: string,
  message: unknown,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    ...(signal ? { signal } : {}),
    headers: inSession(sessionId, {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    }),
    body: JSON.stringify(message),
  });
}
