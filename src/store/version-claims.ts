import { isDuplicateKey, type Store } from './mongo';

/** A claim left by a process that died between claiming a change and writing it is taken over after this long. */
const STALE_CLAIM_MS = 30_000;
/** A write at the current version waits for the changes holding its claim, which each take a few writes. */
const CURRENT_VERSION_TRIES = 40;
const CURRENT_VERSION_RETRY_MS = 50;

/** `{id}@{version}`: held by the one write of the document at that version under way. */
interface ChangeClaimDocument {
  _id: string;
  claimedAt: Date;
}

/** What a claim needs of a stored document. */
interface VersionedDocument {
  _id: string;
  version: number;
}

/**
 * Every write of a versioned document (an agent, a virtual server) holds the claim of the version
 * it writes at, an insert into `claimsCollection` keyed by `{id}@{version}`. An update is not atomic
 * on every MongoDB-compatible store (mongo.ts): without the claim, two writers of one document could
 * both read it, and the later would write back what the earlier changed, even in fields it never set.
 */
export class VersionClaims {
  constructor(
    private readonly store: Store,
    private readonly claimsCollection: string,
    private readonly documentsCollection: string,
  ) {}

  private get documents() {
    return this.store.collection<VersionedDocument>(this.documentsCollection);
  }

  private get claims() {
    return this.store.collection<ChangeClaimDocument>(this.claimsCollection);
  }

  /** Runs `write` of the document at `version` holding that version's claim, and says whether it matched. */
  async whileClaimed(id: string, version: number, write: () => Promise<{ matchedCount: number }>): Promise<boolean> {
    const claimId = `${id}@${version}`;
    if (!(await this.claim(claimId))) return false;
    try {
      return (await write()).matchedCount === 1;
    } finally {
      // Freed whether the document left that version or not: a later holder finds the version as it is.
      await this.claims.deleteOne({ _id: claimId }).catch(() => undefined);
    }
  }

  /**
   * Runs `write` at the document's current version, under its claim, trying again while other changes
   * hold the claim or move the version on; `write` matches nothing when the version moved. Says
   * whether it wrote: false when the document is gone, or changes kept it busy for every try.
   */
  async atCurrentVersion(id: string, write: (version: number) => Promise<{ matchedCount: number }>): Promise<boolean> {
    for (let tries = 0; tries < CURRENT_VERSION_TRIES; tries += 1) {
      const current = await this.documents.findOne({ _id: id }, { projection: { version: 1 } });
      if (!current) return false;
      if (await this.whileClaimed(id, current.version, () => write(current.version))) return true;
      await new Promise((resolve) => setTimeout(resolve, CURRENT_VERSION_RETRY_MS));
    }
    return false;
  }

  private async claim(claimId: string): Promise<boolean> {
    for (let tries = 0; tries < 2; tries += 1) {
      try {
        await this.claims.insertOne({ _id: claimId, claimedAt: new Date() });
        return true;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
      const held = await this.claims.findOne({ _id: claimId });
      if (held && Date.now() - held.claimedAt.getTime() < STALE_CLAIM_MS) return false;
      if (held) await this.claims.deleteOne({ _id: claimId, claimedAt: held.claimedAt });
    }
    return false;
  }
}
