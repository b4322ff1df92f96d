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
const isWebUrl = (url: string): boolean => /^https?:\/\//i.test(url) && URL.canParse(url);

/**
 * The client's handler of `elicitation/create`: form and URL requests go to the call's answerer; a
 * request outside any call (on a session's own stream), or a URL that is not http(s), is declined.
 */
export async function answerElicitation(request: ElicitRequest): Promise<ElicitResult> {
  const answerer = callInContext.getStore();
  const { params } = request;
  if (!answerer) return { action: 'decline' };
  if (params.mode === 'url')
    return isWebUrl(params.url) ? answerer.confirmUrl(params.message, params.url) : { action: 'decline' };
  return answerer.answer(params.message, params.requestedSchema);
}
