import type { IndexDescription } from 'mongodb';
import type { Principal } from '../auth/principal';
import { ChangeLog } from '../store/change-log';
import { isDuplicateKey, type Store } from '../store/mongo';
import { ifVisible, type Agent, type AgentDocument } from './agent';
import { derivedFields } from './search';

export const AGENTS_COLLECTION = 'agents';
export const AGENT_CHANGE_CLAIMS_COLLECTION = 'agent_change_claims';

/** What lists and searches need of an agent: neither its capabilities, its texts nor its secret. */
export type DirectoryEntry = Pick<Agent, 'id' | 'name' | 'visibility' | 'sharedWith' | 'ownerId'> & Pick<AgentDocument, 'operations' | 'searchTokens' | 'searchFields'>;
const NOT_IN_DIRECTORY = { capabilities: 0, signingSecret: 0, description: 0, defaultPrompt: 0 } as const;

/** A claim left by a process that died between claiming a change and writing it is taken over after this long. */
const STALE_CLAIM_MS = 30_000;
/** A rotation waits for changes holding the claim, which each take a few writes. */
const ROTATION_TRIES = 40;
const ROTATION_RETRY_MS = 50;

/** `{agentId}@{version}`: held by the one write of the agent at that version under way. */
interface ChangeClaimDocument {
  _id: string;
  claimedAt: Date;
}

export function toDocument(agent: Agent, derived: Pick<AgentDocument, 'operations' | 'searchTokens' | 'searchFields'>): AgentDocument {
  const { id, capabilities, ...rest } = agent;
  return { _id: id, capabilities: JSON.stringify(capabilities), ...rest, ...derived };
}

export function fromDocument(document: AgentDocument): Agent {
  const { _id, capabilities, operations: _operations, searchTokens: _searchTokens, searchFields: _searchFields, ...rest } = document;
  return { id: _id, capabilities: JSON.parse(capabilities), ...rest };
}

function toDirectoryEntry({ _id, name, visibility, sharedWith, ownerId, operations, searchTokens, searchFields }: Omit<AgentDocument, keyof typeof NOT_IN_DIRECTORY>): DirectoryEntry {
  return { id: _id, name, visibility, sharedWith, ...(ownerId === undefined ? {} : { ownerId }), operations, searchTokens: searchTokens ?? [], searchFields };
}

/** Agents in MongoDB. Every read that serves a caller goes through the visibility rule in `canSee`. */
export class AgentStore {
  private readonly changeListeners: Array<(agentId: string) => void> = [];
  /** Every change of an agent, for the directories of every process (agent-directory.ts). */
  readonly changes: ChangeLog;

  constructor(private readonly store: Store) {
    this.changes = new ChangeLog(store, AGENTS_COLLECTION);
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
    return document ? fromDocument(document) : null;
  }

  /** The agent when it exists and `principal` may see it; null otherwise (callers answer 404 either way). */
  async findVisible(principal: Principal | undefined, agentId: string): Promise<Agent | null> {
    return ifVisible(principal, await this.findById(agentId));
  }

  async insert(agent: Agent): Promise<void> {
    await this.collection.insertOne(toDocument(agent, derivedFields(agent)));
    await this.changed(agent.id);
  }

  /**
   * Writes the agent's registration if it is still at `expectedVersion`; false when someone changed
   * or deleted it meanwhile. The stored signing secret stays: a change read before a rotation must
   * not write the old secret back.
   */
  async replace(agent: Agent, expectedVersion: number): Promise<boolean> {
    const { _id, signingSecret: _rotatedOnItsOwn, ...fields } = toDocument(agent, derivedFields(agent));
    const definedFields = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
    const written = await this.whileClaimed(_id, expectedVersion, () => this.collection.updateOne({ _id, version: expectedVersion }, { $set: definedFields }));
    if (written) await this.changed(_id);
    return written;
  }

  /**
   * A new signing secret; not a change of the registration, so `version` stays. False when the
   * agent is gone, or changes kept it busy for every try.
   */
  async setSigningSecret(agentId: string, signingSecret: string): Promise<boolean> {
    for (let tries = 0; tries < ROTATION_TRIES; tries += 1) {
      const current = await this.collection.findOne({ _id: agentId }, { projection: { version: 1 } });
      if (!current) return false;
      const set = () => this.collection.updateOne({ _id: agentId, version: current.version }, { $set: { signingSecret, updatedAt: new Date() } });
      if (await this.whileClaimed(agentId, current.version, set)) {
        await this.changed(agentId);
        return true;
      }
      await new Promise((resolve) => setTimeout(resolve, ROTATION_RETRY_MS));
    }
    return false;
  }

  private get changeClaims() {
    return this.store.collection<ChangeClaimDocument>(AGENT_CHANGE_CLAIMS_COLLECTION);
  }

  /**
   * Runs `write` of the agent at `version` holding that version's claim, and says whether it
   * matched. FerretDB does not make a conditional write atomic (docs/internals.md, "FerretDB"): without the claim, two
   * writers that read the same version could both write, the later undoing the earlier.
   */
  private async whileClaimed(agentId: string, version: number, write: () => Promise<{ matchedCount: number }>): Promise<boolean> {
    const claimId = `${agentId}@${version}`;
    if (!(await this.claimChange(claimId))) return false;
    try {
      return (await write()).matchedCount === 1;
    } finally {
      // Freed whether the agent left that version or not: a later holder finds the version as it is.
      await this.changeClaims.deleteOne({ _id: claimId }).catch(() => undefined);
    }
  }

  private async claimChange(claimId: string): Promise<boolean> {
    for (let tries = 0; tries < 2; tries += 1) {
      try {
        await this.changeClaims.insertOne({ _id: claimId, claimedAt: new Date() });
        return true;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
      const held = await this.changeClaims.findOne({ _id: claimId });
      if (held && Date.now() - held.claimedAt.getTime() < STALE_CLAIM_MS) return false;
      if (held) await this.changeClaims.deleteOne({ _id: claimId, claimedAt: held.claimedAt });
    }
    return false;
  }

  async delete(agentId: string): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: agentId });
    if (result.deletedCount === 0) return false;
    await this.changed(agentId);
    return true;
  }
}
