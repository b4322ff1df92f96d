import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { fetch, Headers, Response, type Dispatcher } from 'undici';
import { lineageHeaders } from './task-lineage';

/**
 * The JSON-RPC error code of the answer that stands in for a reply longer than MAX_BODY_BYTES. Out
 * of JSON-RPC's ranges, so that no server's own error reads as one.
 */
export const REPLY_TOO_LARGE = -32_899;

/** A reply body grew past the most the service reads (MAX_BODY_BYTES). */
export class ReplyTooLarge extends Error {
  constructor(maxBytes: number) {
    super(`reply body longer than ${maxBytes} bytes (MAX_BODY_BYTES): not read`);
    this.name = 'ReplyTooLarge';
  }
}

/** The bytes of the reply bodies read so far, counted across every response of one or more fetches. */
export interface BytesRead {
  total: number;
}

/**
 * The fetch the MCP transport makes its requests with: through the outbound guard's dispatcher (the
 * same checks as every call to an agent), and no body read past `maxReplyBytes`, each response on
 * its own. The transport would take an SSE answer cut short for a dropped connection and leave its
 * request waiting: such an answer ends instead with a JSON-RPC error for that request
 * (REPLY_TOO_LARGE), and the session's other requests go on. A JSON answer cut short fails with
 * ReplyTooLarge; a cut server-sent stream (GET) just ends. Each body's bytes are added to `read`, when given.
 * A request made on behalf of a task carries its lineage (callOnBehalfOf).
 */
export function guardedFetch(dispatcher: Dispatcher, maxReplyBytes: number, read?: BytesRead): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, { ...(init as Parameters<typeof fetch>[1]), ...withLineage(init), dispatcher });
    if (response.body === null) return response;
    const requestId = requestIdOf(init?.body);
    const isStream = /^\s*text\/event-stream/i.test(response.headers.get('content-type') ?? '');
    let total = 0;
    const limited = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          total += chunk.byteLength;
          if (read) read.total += chunk.byteLength;
          if (total <= maxReplyBytes) return controller.enqueue(chunk);
          const tooLarge = new ReplyTooLarge(maxReplyBytes);
          if (!isStream || requestId === undefined) return controller.error(tooLarge);
          const answer = { jsonrpc: '2.0', id: requestId, error: { code: REPLY_TOO_LARGE, message: tooLarge.message } };
          // The blank line first ends whatever event the cut left open.
          controller.enqueue(new TextEncoder().encode(`\n\nevent: message\ndata: ${JSON.stringify(answer)}\n\n`));
          controller.terminate();
        },
      }),
    );
    return new Response(limited, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The request's headers with the lineage of the task it is made for, when it is made for one. */
function withLineage(init: Parameters<FetchLike>[1]): { headers?: Headers } {
  const lineage = Object.entries(lineageHeaders());
  if (lineage.length === 0) return {};
  const headers = new Headers(init?.headers as ConstructorParameters<typeof Headers>[0]);
  for (const [name, value] of lineage) headers.set(name, value);
  return { headers };
}

/** The JSON-RPC id of the one request a POST body carries, if it carries one. */
function requestIdOf(body: unknown): string | number | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const message = JSON.parse(body) as { id?: unknown; method?: unknown };
    return typeof message.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number')
      ? message.id
      : undefined;
  } catch {
    return undefined;
  }
}
