import { AsyncLocalStorage } from 'node:async_hooks';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';

/** Answers the elicitation requests a server makes during one call: a person's input, or none. */
export interface ElicitationAnswerer {
  /** A form-mode request: the content a person gave. */
  answer(message: string, requestedSchema: Record<string, unknown>): Promise<ElicitResult>;
  /** A URL-mode request: whether a person opened the page and accepts. */
  confirmUrl(message: string, url: string): Promise<ElicitResult>;
}

/**
 * The call an elicitation request belongs to. A server sends the request on the response stream of
 * the call that needs it; the client reads that stream within the async context of the call that
 * sent it, so the context names the call even when several share one kept session.
 */
const callInContext = new AsyncLocalStorage<ElicitationAnswerer>();

/** Runs `call` so that the elicitation requests made during it go to `answerer`. */
export function withElicitation<T>(answerer: ElicitationAnswerer, call: () => Promise<T>): Promise<T> {
  return callInContext.run(answerer, call);
}

/** A page a person may be asked to open: http or https, nothing a browser would run or read locally. */
export const isWebUrl = (url: string): boolean => /^https?:\/\//i.test(url) && URL.canParse(url);

/**
 * A page the current call needs a person to open (a URL-mode request, or one a -32042 answer
 * lists), confirmed by the call's answerer; declined outside any call, or when it is not http(s).
 */
export async function confirmUrlElicitation(message: string, url: string): Promise<ElicitResult> {
  const answerer = callInContext.getStore();
  return answerer && isWebUrl(url) ? answerer.confirmUrl(message, url) : { action: 'decline' };
}

/**
 * The client's handler of `elicitation/create`: form and URL requests go to the call's answerer; a
 * request outside any call (on a session's own stream), or a URL that is not http(s), is declined.
 */
export async function answerElicitation(request: ElicitRequest): Promise<ElicitResult> {
  const { params } = request;
  if (params.mode === 'url') return confirmUrlElicitation(params.message, params.url);
  const answerer = callInContext.getStore();
  return answerer ? answerer.answer(params.message, params.requestedSchema) : { action: 'decline' };
}
