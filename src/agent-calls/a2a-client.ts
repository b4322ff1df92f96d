import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { guardedFetch } from './guarded-fetch';
import type { AgentEndpoint } from './agent-endpoint';
import { A2A_PROTOCOL_VERSION } from './a2a-protocol';

/** Where an A2A agent answers: its JSON-RPC endpoint, and the owner's headers sent with every request. */
export type A2aTarget = AgentEndpoint;

export interface A2aRequestOptions {
  /** The outbound guard's dispatcher: the same address checks as every call to an agent. */
  dispatcher: Dispatcher;
  timeoutMs: number;
  /** Largest reply body read (MAX_BODY_BYTES). */
  maxReplyBytes: number;
  signal?: AbortSignal;
}

/** The agent answered with an HTTP status outside 2xx. */
export class A2aHttpError extends Error {
  constructor(
    readonly status: number,
    readonly bodyText: string,
  ) {
    super(`HTTP ${status}${bodyText.trim() === '' ? '' : `: ${bodyText.replace(/\s+/g, ' ').trim().slice(0, 200)}`}`);
    this.name = 'A2aHttpError';
  }
}

/** The agent answered a JSON-RPC error object. */
export class A2aRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`JSON-RPC error ${code}: ${message}`);
    this.name = 'A2aRpcError';
  }
}

/** The agent's answer is not A2A: not JSON, not a JSON-RPC response, or not for this request. */
export class A2aProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'A2aProtocolError';
  }
}

/**
 * One A2A 1.0 JSON-RPC request to an agent's endpoint, and its `result`. `A2A-Version: 1.0` is sent
 * on every request: an A2A server reads a request without it as 0.3, whose methods and JSON differ.
 * Network trouble, the outbound guard's refusal and a reply past `maxReplyBytes` (ReplyTooLarge)
 * are thrown as they come; the agent's answers as the errors above.
 */
export async function a2aRequest(
  target: A2aTarget,
  method: string,
  params: Record<string, unknown>,
  options: A2aRequestOptions,
): Promise<unknown> {
  const id = randomUUID();
  const answer = (await fetchObject(
    target.endpointUrl,
    {
      method: 'POST',
      headers: { ...target.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    },
    options,
    `its answer to ${method}`,
  )) as { id?: unknown; result?: unknown; error?: unknown };
  if (answer.id !== id) throw new A2aProtocolError(`its answer to ${method} is not for the request sent`);
  if (typeof answer.error === 'object' && answer.error !== null) {
    const { code, message, data } = answer.error as { code?: unknown; message?: unknown; data?: unknown };
    if (typeof code !== 'number') throw new A2aProtocolError(`its error answer to ${method} has no numeric code`);
    throw new A2aRpcError(code, typeof message === 'string' ? message : '', data);
  }
  if (typeof answer.result !== 'object' || answer.result === null)
    throw new A2aProtocolError(`its answer to ${method} has neither a result object nor an error`);
  return answer.result;
}

/**
 * An Agent Card, read with GET through the outbound guard: the JSON object, unchecked. The owner's
 * headers go with it: the card is the agent's own, on its endpoint's origin or at the URL the owner
 * gave, and a card of a private agent (this service's, for one) is served only to its credentials.
 */
export async function readAgentCard(
  url: string,
  headers: A2aTarget['headers'],
  options: A2aRequestOptions,
): Promise<Record<string, unknown>> {
  return fetchObject(url, { headers: headers ?? {} }, options, 'its Agent Card');
}

/**
 * One request through the outbound guard, with `A2A-Version` and the JSON it accepts, and its JSON
 * object answer; any other status than 2xx is an A2aHttpError. `what` names the answer in errors.
 */
async function fetchObject(
  url: string,
  { method, headers, body }: { method?: string; headers: Record<string, string>; body?: string },
  { dispatcher, maxReplyBytes, timeoutMs, signal }: A2aRequestOptions,
  what: string,
): Promise<Record<string, unknown>> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const response = await guardedFetch(dispatcher, maxReplyBytes)(url, {
    method,
    headers: { ...headers, accept: 'application/json', 'a2a-version': A2A_PROTOCOL_VERSION },
    body,
    // The outbound rules follow no redirect: a 3xx is the agent's answer, and refuses the request.
    redirect: 'manual',
    signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]),
  });
  const text = await response.text();
  if (!response.ok) throw new A2aHttpError(response.status, text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new A2aProtocolError(`${what} is not JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new A2aProtocolError(`${what} is not a JSON object`);
  return parsed as Record<string, unknown>;
}
