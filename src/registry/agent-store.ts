import type { IndexDescription } from 'mongodb';
import type { Principal } from '../auth/principal';
import type { SecretBox } from '../auth/secret-box';
import { ChangeLog } from '../store/change-log';
import type { Store } from '../store/mongo';
import { VersionClaims } from '../store/version-claims';
import { AgentProtocol, canSee, type Agent, type AgentDocument, type ListedAgent } from './agent';
import { derivedFields } from './search';

export const AGENTS_COLLECTION = 'agents';
export const AGENT_CHANGE_CLAIMS_COLLECTION = 'agent_change_claims';

/** The claims every write of a stored agent holds (VersionClaims): the store's, a migration's. */
export const agentClaims = (store: Store) =>
  new VersionClaims(store, AGENT_CHANGE_CLAIMS_COLLECTION, AGENTS_COLLECTION);

/** What lists and searches need of an agent: neither its capabilities, its texts nor its secret. */
export type DirectoryEntry = Pick<Agent, 'id' | 'name' | 'visibility' | 'sharedWith' | 'owner'> &
  Pick<AgentDocument, 'operations' | 'searchTokens' | 'searchFields'>;
const NOT_IN_DIRECTORY = { capabilities: 0, signingSecret: 0, headers: 0, description: 0, defaultPrompt: 0 } as const;

/** The stored agent but its secrets: the caller seals them. */
function documentFields(agent: Agent): Omit<AgentDocument, 'signingSecret' | 'headers'> {
  const { id, endpointUrl, capabilities, signingSecret: _sealedApart, headers: _sealedToo, ...rest } = agent;
  return {
    _id: id,
    mcpUrl: endpointUrl,
    capabilities: JSON.stringify(capabilities),
    ...rest,
    ...derivedFields(agent),
  };
}

/** How versions before sealing stored a signing secret: as it is, `whsec_…`. */
const PLAINTEXT_SECRET_PREFIX = 'whsec_';

/** What a sealed signing secret is bound to: it opens for this agent only. */
export const secretContextOf = (agentId: string) => `agents/${agentId}/signingSecret`;
/** What an agent's sealed headers are bound to. */
const headersContextOf = (agentId: string) => `agents/${agentId}/headers`;

function toDirectoryEntry({
  _id,
  name,
  visibility,
  sharedWith,
  owner,
  operations,
  searchTokens,
  searchFields,
}: Omit<AgentDocument, keyof typeof NOT_IN_DIRECTORY>): DirectoryEntry {
  return {
    id: _id,
    name,
    visibility,
    sharedWith,
    ...(owner === undefined ? {} : { owner }),
    operations,
    searchTokens: searchTokens ?? [],
    searchFields,
  };
}

/** Agents in MongoDB. Every read that serves a caller goes through the visibility rule in `canSee`. */
export class AgentStore {
  private readonly changeListeners: Array<(agentId: string) => void> = [];
  /** Every change of an agent, for the directories of every process (agent-directory.ts). */
  readonly changes: ChangeLog;
  private readonly claims: VersionClaims;

  /** `secrets` seals the signing secrets: the store never holds them in plaintext. */
  constructor(
    private readonly store: Store,
    private readonly secrets: SecretBox,
  ) {
    this.changes = new ChangeLog(store, AGENTS_COLLECTION);
    this.claims = agentClaims(store);
  }

  /** The agent as stored: what `insert` writes (public for the store-reads bench, which fills collections in bulk). */
  toDocument(agent: Agent): AgentDocument {
    return {
      ...this.registrationFields(agent),
      signingSecret: this.secrets.seal(agent.signingSecret, secretContextOf(agent.id)),
    };
  }

  /** The stored agent but its signing secret, which is sealed apart and rotated on its own. */
  private registrationFields(agent: Agent): Omit<AgentDocument, 'signingSecret'> {
    return {
      ...documentFields(agent),
      ...(agent.headers === undefined
        ? {}
        : { headers: this.secrets.seal(JSON.stringify(agent.headers), headersContextOf(agent.id)) }),
    };
  }

  private fromDocument(document: AgentDocument): Agent {
    const { signingSecret, headers, ...shown } = document;
    return {
      ...this.shownFields(shown),
      signingSecret: this.openSecret(document._id, signingSecret),
      ...(headers === undefined ? {} : { headers: this.openHeaders(document._id, headers) }),
    };
  }

  private listedFromDocument(document: Omit<AgentDocument, 'signingSecret'>): ListedAgent {
    const { headers, ...shown } = document;
    return {
      ...this.shownFields(shown),
      headerNames: headers === undefined ? [] : Object.keys(this.openHeaders(document._id, headers)),
    };
  }

  private shownFields(
    document: Omit<AgentDocument, 'signingSecret' | 'headers'>,
  ): Omit<Agent, 'signingSecret' | 'headers'> {
    const {
      _id,
      mcpUrl,
      capabilities,
      protocol,
      operations: _operations,
      searchTokens: _searchTokens,
      searchFields: _searchFields,
      ...rest
    } = document;
    return {
      id: _id,
      endpointUrl: mcpUrl,
      capabilities: JSON.parse(capabilities) as Agent['capabilities'],
      protocol: protocol ?? AgentProtocol.ACS,
      ...rest,
    };
  }

  private openHeaders(agentId: string, sealed: string): Record<string, string> {
    return JSON.parse(this.secrets.open(sealed, headersContextOf(agentId))) as Record<string, string>;
  }

  /** Reads both forms: a plaintext secret of an older version stays usable until `sealStoredSecrets` seals it. */
  private openSecret(agentId: string, stored: string): string {
    return stored.startsWith(PLAINTEXT_SECRET_PREFIX) ? stored : this.secrets.open(stored, secretContextOf(agentId));
  }

  /** Called after every change of a stored agent made through this store; a write that matched nothing changed nothing. */
  onChange(listener: (agentId: string) => void): void {
    this.changeListeners.push(listener);
  }

  /** Records a change for the directories of every process, then tells this process's listeners. */
  private async changed(agentId: string): Promise<void> {
    await this.changes.record(agentId);
    for (const listener of this.changeListeners) listener(agentId);
  }

  /** Every agent, with only what lists and searches need: the one read of the whole collection, made when a directory is read whole. */
  async directoryEntries(): Promise<DirectoryEntry[]> {
    const documents = await this.collection.find({}, { projection: NOT_IN_DIRECTORY }).toArray();
    return documents.map(toDirectoryEntry);
  }

  /** One agent as directoryEntries gives it; null when it is gone. */
  async directoryEntry(agentId: string): Promise<DirectoryEntry | null> {
    const document = await this.collection.findOne({ _id: agentId }, { projection: NOT_IN_DIRECTORY });
    return document ? toDirectoryEntry(document) : null;
  }

  /** None: agents are read by `_id`, and lists and searches from the directory (agent-directory.ts). */
  static indexes(): IndexDescription[] {
    return [];
  }

  get collection() {
    return this.store.collection<AgentDocument>(AGENTS_COLLECTION);
  }

  async findById(agentId: string): Promise<Agent | null> {
    const document = await this.collection.findOne({ _id: agentId });
    return document ? this.fromDocument(document) : null;
  }

  /** The agent as lists show it, its secrets neither read nor opened; null when it is gone. */
  async findListed(agentId: string): Promise<ListedAgent | null> {
    const document = await this.collection.findOne({ _id: agentId }, { projection: { signingSecret: 0 } });
    return document ? this.listedFromDocument(document) : null;
  }

  /** The agent when it exists and `principal` may see it; null otherwise (callers answer 404 either way). */
  async findVisible(principal: Principal | undefined, agentId: string): Promise<Agent | null> {
    const document = await this.collection.findOne({ _id: agentId });
    // Judged on the stored fields, before the capabilities are parsed: a private agent costs no more than an unknown id.
    if (!document || !canSee(principal, { ...document, id: document._id })) return null;
    return this.fromDocument(document);
  }

  async insert(agent: Agent): Promise<void> {
    await this.collection.insertOne(this.toDocument(agent));
    await this.changed(agent.id);
  }

  /**
   * Writes the agent's registration if it is still at `expectedVersion`; false when someone changed
   * or deleted it meanwhile. The stored signing secret stays: a change read before a rotation must
   * not write the old secret back.
   */
  async replace(agent: Agent, expectedVersion: number): Promise<boolean> {
    const { _id, ...fields } = this.registrationFields(agent);
    const definedFields = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
    // Headers and a push offer removed by the change are removed from the store too.
    const removed = {
      ...(agent.headers === undefined ? { headers: true as const } : {}),
      ...(agent.pushNotifications === undefined ? { pushNotifications: true as const } : {}),
    };
    const update = Object.keys(removed).length > 0 ? { $set: definedFields, $unset: removed } : { $set: definedFields };
    const written = await this.claims.whileClaimed(_id, expectedVersion, () =>
      this.collection.updateOne({ _id, version: expectedVersion }, update),
    );
    if (written) await this.changed(_id);
    return written;
  }

  /**
   * A new signing secret; not a change of the registration, so `version` stays. False when the
   * agent is gone, or changes kept it busy for every try.
   */
  async setSigningSecret(agentId: string, signingSecret: string): Promise<boolean> {
    const written = await this.claims.atCurrentVersion(agentId, (version) =>
      this.collection.updateOne(
        { _id: agentId, version },
        { $set: { signingSecret: this.secrets.seal(signingSecret, secretContextOf(agentId)), updatedAt: new Date() } },
      ),
    );
    if (written) await this.changed(agentId);
    return written;
  }

  /**
   * Seals what older versions stored in plaintext and re-seals what a previous key sealed (signing
   * secrets and headers), once at every start; repeating it changes nothing. A value sealed with a
   * key this process lacks stops the start before anything is written, so that a wrong SECRETS_KEY
   * seals nothing. An agent being changed meanwhile is left to the next start (`openSecret` reads
   * both forms).
   */
  async sealStoredSecrets(): Promise<{ sealed: number; leftBusy: number }> {
    const stored = await this.collection
      .find({}, { projection: { _id: 1, signingSecret: 1, headers: 1, version: 1 } })
      .toArray();
    const unsealed = stored
      .filter(
        ({ signingSecret, headers }) =>
          !this.secrets.sealedWithCurrentKey(signingSecret) ||
          (headers !== undefined && !this.secrets.sealedWithCurrentKey(headers)),
      )
      .map((document) => ({
        ...document,
        resealed: {
          signingSecret: this.secrets.seal(
            this.openStoredSecret(document._id, document.signingSecret),
            secretContextOf(document._id),
          ),
          ...(document.headers === undefined
            ? {}
            : {
                headers: this.secrets.seal(
                  this.openStoredSecret(document._id, document.headers, headersContextOf(document._id)),
                  headersContextOf(document._id),
                ),
              }),
        },
      }));
    let [sealed, leftBusy] = [0, 0];
    for (const { _id, signingSecret, version, resealed } of unsealed) {
      // The same values in another form: neither `version` nor `updatedAt` changes, and a rotation meanwhile wins.
      const reseal = () => this.collection.updateOne({ _id, version, signingSecret }, { $set: resealed });
      if (await this.claims.whileClaimed(_id, version, reseal)) sealed += 1;
      else leftBusy += 1;
    }
    return { sealed, leftBusy };
  }

  private openStoredSecret(agentId: string, stored: string, context?: string): string {
    try {
      return context === undefined ? this.openSecret(agentId, stored) : this.secrets.open(stored, context);
    } catch (error) {
      throw new Error(
        `The ${context === undefined ? 'signing secret' : 'header set'} of agent ${agentId} does not open: ${(error as Error).message}. Start with the SECRETS_KEY that sealed it, or with that key in SECRETS_KEY_PREVIOUS (docs/configuration.md)`,
        { cause: error },
      );
    }
  }

  async delete(agentId: string): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: agentId });
    if (result.deletedCount === 0) return false;
    await this.changed(agentId);
    return true;
  }

  /** Which of `agentIds` name registered agents: one read by `_id` each, as `$in` may read the whole collection (src/store/mongo.ts). */
  async existingIds(agentIds: string[]): Promise<Set<string>> {
    const found = await Promise.all(
      agentIds.map((agentId) => this.collection.findOne({ _id: agentId }, { projection: { _id: 1 } })),
    );
    return new Set(found.flatMap((document) => (document ? [document._id] : [])));
  }
}
