import { request, type Dispatcher } from 'undici';
import { lineageHeaders } from './task-lineage';
import { signWebhook } from './webhook-signature';

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

/** One `POST url` with a JSON body, Standard Webhooks headers and the lineage of the task it is made for, through the outbound guard's dispatcher. Network trouble and the guard's refusal (DestinationRefused) throw. */
export async function postSigned(
  dispatcher: Dispatcher,
  { url, secret, messageId, payload, timeoutMs, maxReplyBytes, signal }: SignedPost,
): Promise<SignedPostReply> {
  const body = JSON.stringify(payload);
  const reply = await request(url, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json', ...lineageHeaders(), ...signWebhook(secret, messageId, body) },
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
