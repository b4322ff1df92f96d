import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store } from '../store/mongo';
import { ADMIN_PRINCIPAL, PrincipalKind, type Principal } from './principal';

export const API_KEYS_COLLECTION = 'api_keys';

/** A stored key: only its SHA-256 is kept. Keys are 256 random bits, so a fast hash is enough. */
export interface ApiKeyRecord {
  /** Non-secret lookup prefix, also the key's public id. */
  _id: string;
  hash: string;
  kind: typeof PrincipalKind.SERVICE | typeof PrincipalKind.AGENT;
  /** The service key's own id, or the agentId the key belongs to. */
  subjectId: string;
  description?: string;
  /** Who created a service key: an admin or another service. */
  createdBy?: Principal;
  /**
   * The service key whose limits this one shares: the minting service's tenant. Absent on keys an
   * admin created, and on keys minted before it was recorded, which keep their own.
   */
  tenantId?: string;
  createdAt: Date;
  revokedAt?: Date;
}

export interface IssuedKey {
  id: string;
  key: string;
  createdAt: Date;
}

const KEY_PATTERN = /^acs_([A-Za-z0-9_-]{16})_([A-Za-z0-9_-]{43})$/;

const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

export class ApiKeyStore {
  private readonly adminHash?: Buffer;

  constructor(
    private readonly store: Store,
    adminApiKey: string | undefined,
  ) {
    this.adminHash = adminApiKey === undefined ? undefined : sha256(adminApiKey);
  }

  static indexes() {
    return [{ key: { subjectId: 1 }, name: 'by_subject' }];
  }

  private get keys() {
    return this.store.collection<ApiKeyRecord>(API_KEYS_COLLECTION);
  }

  async issue(
    kind: ApiKeyRecord['kind'],
    subjectId: string | undefined,
    description?: string,
    createdBy?: Principal,
  ): Promise<IssuedKey> {
    const id = randomBytes(12).toString('base64url');
    const key = `acs_${id}_${randomBytes(32).toString('base64url')}`;
    const createdAt = new Date();
    const tenantId = createdBy?.kind === PrincipalKind.SERVICE ? (createdBy.tenantId ?? createdBy.id) : undefined;
    await this.keys.insertOne({
      _id: id,
      hash: sha256(key).toString('hex'),
      kind,
      subjectId: subjectId ?? id,
      ...(description === undefined ? {} : { description }),
      ...(createdBy === undefined ? {} : { createdBy: { kind: createdBy.kind, id: createdBy.id } }),
      ...(tenantId === undefined ? {} : { tenantId }),
      createdAt,
    });
    return { id, key, createdAt };
  }

  /** The principal a presented key stands for, or undefined when it is unknown, revoked or malformed. */
  async resolve(presented: string): Promise<Principal | undefined> {
    const digest = sha256(presented);
    if (this.adminHash && timingSafeEqual(digest, this.adminHash)) return ADMIN_PRINCIPAL;
    const match = KEY_PATTERN.exec(presented);
    if (!match) return undefined;
    const record = await this.keys.findOne({ _id: match[1] });
    if (!record || record.revokedAt) return undefined;
    if (!timingSafeEqual(digest, Buffer.from(record.hash, 'hex'))) return undefined;
    return {
      kind: record.kind,
      id: record.subjectId,
      ...(record.tenantId === undefined ? {} : { tenantId: record.tenantId }),
    };
  }

  async revoke(id: string): Promise<boolean> {
    const result = await this.keys.updateOne(
      { _id: id, revokedAt: { $exists: false } },
      { $set: { revokedAt: new Date() } },
    );
    return result.matchedCount === 1;
  }

  async revokeAllOf(subjectId: string): Promise<void> {
    await this.keys.updateMany({ subjectId, revokedAt: { $exists: false } }, { $set: { revokedAt: new Date() } });
  }

  find(id: string): Promise<ApiKeyRecord | null> {
    return this.keys.findOne({ _id: id });
  }
}
