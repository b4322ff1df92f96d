import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { fetch, Response, type Dispatcher } from 'undici';

/** A reply body grew past the most the service reads (MAX_BODY_BYTES). */
export class ReplyTooLarge extends Error {
  constructor(maxBytes: number) {
    super(`reply body longer than ${maxBytes} bytes (MAX_BODY_BYTES): not read`);
    this.name = 'ReplyTooLarge';
  }
}

/**
 * The fetch the MCP transport makes its requests with: through the outbound guard's dispatcher (the
 * same checks as every call to an agent), and no body read past `maxReplyBytes`, each response on
 * its own (an SSE stream counts every event it carries). The transport takes a broken SSE stream
 * for a dropped connection and leaves its request waiting: `onTooLarge` lets the session end it.
 */
export function guardedFetch(
  dispatcher: Dispatcher,
  maxReplyBytes: number,
  onTooLarge: (error: ReplyTooLarge) => void,
): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, { ...(init as Parameters<typeof fetch>[1]), dispatcher });
    if (response.body === null) return response;
    let total = 0;
    const limited = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          total += chunk.byteLength;
          if (total <= maxReplyBytes) return controller.enqueue(chunk);
          const error = new ReplyTooLarge(maxReplyBytes);
          controller.error(error);
          onTooLarge(error);
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
