import { Agent, fetch as fetchVia } from 'undici';
import { testStack } from './test-stack';

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as X-Api-Key; `admin` means the test stack's admin key. */
  apiKey?: string;
  headers?: Record<string, string>;
  /** A raw body sent as it is (for malformed JSON and size limits). */
  rawBody?: string | Buffer;
  baseUrl?: string;
  /** The loopback address to call from (127.0.0.1 unless given), for limits counted per address. */
  localAddress?: string;
}

/** One connection pool per local address a test calls from. */
const poolsFrom = new Map<string, Agent>();
const poolFrom = (localAddress: string): Agent => {
  if (!poolsFrom.has(localAddress)) poolsFrom.set(localAddress, new Agent({ localAddress }));
  return poolsFrom.get(localAddress)!;
};

/** Closes the connections kept by calls with `localAddress`, so that Jest can exit. */
export async function closePoolsFrom(): Promise<void> {
  await Promise.all([...poolsFrom.values()].map((pool) => pool.close()));
  poolsFrom.clear();
}

/** One HTTP call to the service under test, with the body parsed when it is JSON. */
export async function call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<Reply<T>> {
  const stack = testStack();
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey) headers['x-api-key'] = options.apiKey === 'admin' ? stack.adminKey : options.apiKey;
  let body: string | Buffer | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const url = `${options.baseUrl ?? stack.baseUrl}${path}`;
  const response = options.localAddress
    ? await fetchVia(url, { method, headers, body, dispatcher: poolFrom(options.localAddress) })
    : await fetch(url, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json') && text.length > 0) parsed = JSON.parse(text);
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/** Asserts the contract's error body and returns it. */
export function expectError(
  reply: Reply,
  status: number,
  code: string,
): { code: string; message: string; details?: unknown } {
  expect({ status: reply.status, code: reply.body?.error?.code }).toEqual({ status, code });
  expect(typeof reply.body.error.message).toBe('string');
  return reply.body.error;
}
