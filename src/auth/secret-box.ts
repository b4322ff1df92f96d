import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { SECRET_KEY_BYTES, type Config } from '../config/config';

/** AES-256-GCM: a 32-byte key, a fresh 12-byte nonce per value, a 16-byte tag that detects any change. */
const ALGORITHM = 'aes-256-gcm';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Names the format of a sealed value, so that another cipher or layout can come beside it. */
const FORMAT = 'v1';

/**
 * A short public name of a key (the start of its SHA-256), written into every value it seals, so
 * that a value names the key that opens it and a rotation can tell what is still to re-seal.
 */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 8);
}

export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

/**
 * Seals secrets for storage: `v1.{keyId}.{nonce}.{ciphertext}.{tag}` (base64url parts). `context`
 * (for example whose secret it is) is authenticated with the value, so a sealed value copied to
 * another record does not open there. Values sealed with `previous` keys still open; new ones are
 * always sealed with `current`.
 */
export class SecretBox {
  private readonly keys: Map<string, Buffer>;
  readonly currentKeyId: string;

  constructor(
    private readonly current: Buffer,
    previous: Buffer[] = [],
  ) {
    for (const key of [current, ...previous]) {
      if (key.length !== SECRET_KEY_BYTES)
        throw new SecretBoxError(`A secret key has ${SECRET_KEY_BYTES} bytes, not ${key.length}`);
    }
    this.currentKeyId = keyIdOf(current);
    this.keys = new Map([...previous, current].map((key) => [keyIdOf(key), key]));
  }

  seal(plaintext: string, context: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.current, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT, this.currentKeyId, nonce, ciphertext, cipher.getAuthTag()]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  /** The plaintext; throws SecretBoxError when the value is not one of ours, its key is unknown, or it was changed. */
  open(sealed: string, context: string): string {
    const [format, keyId, nonce, ciphertext, tag, ...rest] = sealed.split('.');
    if (format !== FORMAT || tag === undefined || rest.length > 0) throw new SecretBoxError('Not a sealed secret');
    const key = this.keys.get(keyId);
    if (!key) throw new SecretBoxError(`Sealed with key ${keyId}, which is neither the current nor a previous key`);
    try {
      const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(nonce, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError(
        `A secret sealed with key ${keyId} does not open: it was changed, or belongs to another record`,
      );
    }
  }

  /** Whether `value` is sealed, and with the current key (nothing to re-seal). */
  sealedWithCurrentKey(value: string): boolean {
    return value.startsWith(`${FORMAT}.${this.currentKeyId}.`);
  }
}

/** The box of SECRETS_KEY and SECRETS_KEY_PREVIOUS. */
export function secretBoxOf(config: Pick<Config, 'secretsKey' | 'secretsKeysPrevious'>): SecretBox {
  if (!config.secretsKey) throw new SecretBoxError('SECRETS_KEY is not set');
  return new SecretBox(config.secretsKey, config.secretsKeysPrevious);
}
