import { createHmac } from 'node:crypto';

/** The secret format of Standard Webhooks: `whsec_` + base64 of the key bytes. */
const SECRET_PREFIX = 'whsec_';

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

function keyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('A signing secret must start with whsec_');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/** `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed with the secret's decoded bytes. */
export function webhookSignature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** Standard Webhooks headers for sending `body` now; `id` must stay the same for a redelivery of the same message. */
export function signWebhook(secret: string, id: string, body: string, now: Date = new Date()): WebhookHeaders {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignature(secret, id, timestamp, body),
  };
}
