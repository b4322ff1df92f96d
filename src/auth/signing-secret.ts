import { randomBytes } from 'node:crypto';

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes (the HMAC key is the decoded bytes). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
