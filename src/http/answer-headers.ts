import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context, Next } from 'koa';
import type { ApiError } from './errors';

/**
 * Sent with every answer. No answer is a document for a browser to reinterpret as another type, and
 * none is for a cache to keep: some carry API keys and signing secrets (POST /agents, POST /keys,
 * a key rotation), and the rest are the caller's own view of the service.
 */
export const ANSWER_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

/** Sets ANSWER_HEADERS before anything below runs, so that errors and 404s carry them too. */
export async function setAnswerHeaders(ctx: Context, next: Next): Promise<void> {
  ctx.set(ANSWER_HEADERS);
  await next();
}

/** Answers with the contract's error body straight on the socket and hangs up: for requests refused before Koa sees them. */
export function endWithError(socket: Duplex, status: number, error: ApiError): void {
  const body = JSON.stringify(error.toBody());
  const headers = {
    ...ANSWER_HEADERS,
    ...error.headers,
    Connection: 'close',
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${head}\r\n${body}`);
}
