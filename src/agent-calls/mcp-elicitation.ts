import { AsyncLocalStorage } from 'node:async_hooks';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';

/** Answers the elicitation requests a server makes during one call: a person's input, or none. */
export interface ElicitationAnswerer {
  answer(message: string, requestedSchema: Record<string, unknown>): Promise<ElicitResult>;
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

/**
 * The client's handler of `elicitation/create`: form requests go to the call's answerer; a URL
 * request, or one outside any call (on a session's own stream), is declined.
 */
export async function answerElicitation(request: ElicitRequest): Promise<ElicitResult> {
  const answerer = callInContext.getStore();
  const { params } = request;
  if (!answerer || ('mode' in params && params.mode === 'url') || !('requestedSchema' in params))
    return { action: 'decline' };
  return answerer.answer(params.message, params.requestedSchema);
}
