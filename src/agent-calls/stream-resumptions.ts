import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * Streams one MCP session resumes (a GET with `Last-Event-ID`, SEP-1699) within any call timeout.
 * The SDK's transport resumes a stream the server closed each time it closes, after the server's
 * `retry`; a server that closes every stream it opens would be followed for as long as the session
 * lives, as often as its `retry` says.
 */
export const MAX_STREAM_RESUMPTIONS = 5;

/** A resumption past MAX_STREAM_RESUMPTIONS: the transport gives that stream up (its request times out). */
export class TooManyResumptions extends Error {
  constructor(windowMs: number) {
    super(
      `the MCP server closed its streams more than ${MAX_STREAM_RESUMPTIONS} times within ${windowMs} ms: not resumed`,
    );
    this.name = 'TooManyResumptions';
  }
}

/**
 * `fetch` for one session, refusing any GET with `Last-Event-ID` beyond MAX_STREAM_RESUMPTIONS within
 * `windowMs` (the call timeout). The transport counts a refused resumption as a failed one and stops
 * after its `maxRetries` of them; the request then ends at its timeout, as it would have without one.
 */
export function withBoundedResumptions(fetch: FetchLike, windowMs: number): FetchLike {
  const resumedAt: number[] = [];
  return (url, init) => {
    if (init?.method === 'GET' && new Headers(init.headers).has('last-event-id')) {
      const now = performance.now();
      while (resumedAt.length > 0 && now - resumedAt[0] >= windowMs) resumedAt.shift();
      if (resumedAt.length >= MAX_STREAM_RESUMPTIONS) return Promise.reject(new TooManyResumptions(windowMs));
      resumedAt.push(now);
    }
    return fetch(url, init);
  };
}
