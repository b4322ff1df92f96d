import type { Context } from 'koa';
import type { ErrorPresenter } from '../http/error-handler';
import { A2A_PROTOCOL_VERSION } from '../agent-calls/a2a-protocol';
import { asJsonRpcError, errorResponse, jsonRpcErrorOf } from './a2a-errors';
import { JsonRpcCode, JsonRpcError, readRequest } from './json-rpc';

/** The version a request without A2A-Version asks for (A2A 1.0 §3.6.2). */
const UNVERSIONED = '0.3';

/** A request with an id: one that expects an answer. */
export interface A2aCall {
  id: string | number | null;
  method: string;
  params: Record<string, unknown>;
}

/** A method's answer: its result, or a writer that answers on its own (a stream of events). */
export type A2aAnswer = { result: unknown } | (() => Promise<void>);

/**
 * One exchange on an A2A JSON-RPC endpoint: reads the request, leaves a notification unanswered (204:
 * JSON-RPC forbids an answer, and A2A 1.0 §9.3 gives every method's request an id, so none is run),
 * checks A2A-Version, runs the method and answers its result or its error in a JSON-RPC response.
 */
export async function answerJsonRpc(ctx: Context, run: (call: A2aCall) => Promise<A2aAnswer>): Promise<void> {
  let id: string | number | null = null;
  try {
    const request = readRequest(ctx.request.body);
    if (request.id === undefined) {
      ctx.status = 204;
      return;
    }
    id = request.id;
    checkVersion(ctx);
    const answer = await run({ id, method: request.method, params: request.params ?? {} });
    if (typeof answer === 'function') return await answer();
    ctx.body = { jsonrpc: '2.0', id, result: answer.result };
  } catch (error) {
    const rpcError = asJsonRpcError(error);
    if (!rpcError) throw error;
    ctx.body = errorResponse(id, rpcError);
  }
}

/**
 * A2A-Version names the version whose semantics the request expects (A2A 1.0 §3.6.2): a patch
 * number does not count, and a request without one is A2A 0.3's, which these endpoints do not speak.
 */
function checkVersion(ctx: Context): void {
  const named = ctx.get('a2a-version').trim();
  const asked = named || UNVERSIONED;
  if (asked.split('.').slice(0, 2).join('.') === A2A_PROTOCOL_VERSION) return;
  throw new JsonRpcError(
    JsonRpcCode.VERSION_NOT_SUPPORTED,
    named
      ? `A2A-Version ${named} is not supported; send A2A-Version: ${A2A_PROTOCOL_VERSION}`
      : `A request without A2A-Version asks for A2A ${UNVERSIONED}, which is not supported; send A2A-Version: ${A2A_PROTOCOL_VERSION}`,
    { metadata: { requestedVersion: asked, supportedVersions: A2A_PROTOCOL_VERSION } },
  );
}

/**
 * Errors raised before a route runs (malformed JSON, a body of another media type) answered as
 * JSON-RPC's, of no request read yet (id null), on the POSTs whose paths match `endpoints`.
 */
export function jsonRpcErrorsOn(endpoints: RegExp): ErrorPresenter {
  return (ctx, error) => {
    if (ctx.method !== 'POST' || !endpoints.test(ctx.path)) return undefined;
    const rpcError = jsonRpcErrorOf(error);
    return rpcError && { status: 200, body: errorResponse(null, rpcError) };
  };
}

/**
 * A2A methods the service's endpoints do not offer: the spec's "not supported" errors, not "no such method"
 * (A2A 1.0 §3.3.4: the card declares neither push notifications nor an extended card).
 * A Map: the caller names the method, and `__proto__` or `constructor` must not find Object's members.
 */
const NOT_OFFERED = new Map<string, number>([
  ['CreateTaskPushNotificationConfig', JsonRpcCode.PUSH_NOTIFICATION_NOT_SUPPORTED],
  ['GetTaskPushNotificationConfig', JsonRpcCode.PUSH_NOTIFICATION_NOT_SUPPORTED],
  ['ListTaskPushNotificationConfigs', JsonRpcCode.PUSH_NOTIFICATION_NOT_SUPPORTED],
  ['DeleteTaskPushNotificationConfig', JsonRpcCode.PUSH_NOTIFICATION_NOT_SUPPORTED],
  ['GetExtendedAgentCard', JsonRpcCode.UNSUPPORTED_OPERATION],
]);

/** The error for a method an endpoint does not serve: not offered (by A2A's code for it), or no such method. */
export function methodNotServed(method: string): JsonRpcError {
  const notOffered = NOT_OFFERED.get(method);
  if (notOffered !== undefined) return new JsonRpcError(notOffered, `${method} is not offered by this endpoint`);
  return new JsonRpcError(JsonRpcCode.METHOD_NOT_FOUND, `No method ${method}`);
}
