import { ApplicationFailure, log } from '@temporalio/activity';
import { request, type Dispatcher } from 'undici';
import { DestinationRefused } from '../src/tasks/outbound-guard';
import { signWebhook } from '../src/tasks/webhook-signature';
import { causeOf, describeError } from '../src/ops/describe-error';
import { TaskErrorCode } from '../workflows/task-types';

export interface SignedPost {
  url: string;
  /** The receiver's `whsec_` secret. */
  secret: string;
  /** `webhook-id`: the same for every redelivery of one message. */
  messageId: string;
  payload: unknown;
  timeoutMs: number;
  /** Largest reply body read; a longer one is discarded and its text is null. */
  maxReplyBytes: number;
  /** Aborts the call early (the activity's cancellation). */
  signal?: AbortSignal;
}

export interface SignedPostReply {
  status: number;
  /** Null when the body exceeded maxReplyBytes. */
  text: string | null;
}

/** One `POST url` with a JSON body and Standard Webhooks headers, through the outbound guard's dispatcher. Network trouble and the guard's refusal (DestinationRefused) throw. */
export async function postSigned(
  dispatcher: Dispatcher,
  { url, secret, messageId, payload, timeoutMs, maxReplyBytes, signal }: SignedPost,
): Promise<SignedPostReply> {
  const body = JSON.stringify(payload);
  const reply = await request(url, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json', ...signWebhook(secret, messageId, body) },
    body,
    signal:
      signal === undefined ? AbortSignal.timeout(timeoutMs) : AbortSignal.any([AbortSignal.timeout(timeoutMs), signal]),
  });
  return { status: reply.statusCode, text: await readLimited(reply.body, maxReplyBytes) };
}

async function readLimited(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) {
      body.destroy();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The failure of a call the outbound guard refused, or undefined when `error` is anything else.
 * Non-retryable: the refusal is policy, and a retry would only deliver later what was refused (once
 * a restart allowed private addresses, say). The message names the URL as given, not the address it
 * led to; the operator's log has that.
 */
export function refusalOf(error: unknown, call: string, url: string, type?: string): ApplicationFailure | undefined {
  const refused = causeOf(error, DestinationRefused);
  if (!refused) return undefined;
  log.warn('Outbound call refused by the address guard', { url, address: refused.address });
  return ApplicationFailure.nonRetryable(`${call} ${url} refused: ${refused.message}`, type);
}

/**
 * `read`'s verdict of a failed request to an agent; what `read` throws on instead is the activity's
 * failure: final for the outbound guard's refusal (AGENT_URL_REFUSED), retried for network trouble
 * (AGENT_UNREACHABLE). `doing` and `url` name the request in messages.
 */
export function verdictOrFailure<V>(error: unknown, read: (error: unknown) => V, doing: string, url: string): V {
  try {
    return read(error);
  } catch (thrown) {
    throw (
      refusalOf(thrown, doing, url, TaskErrorCode.AGENT_URL_REFUSED) ??
      ApplicationFailure.retryable(`${doing} ${url} failed: ${describeError(thrown)}`, TaskErrorCode.AGENT_UNREACHABLE)
    );
  }
}
