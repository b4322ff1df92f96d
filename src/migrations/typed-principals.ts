import { API_KEYS_COLLECTION } from '../auth/api-keys';
import { ParticipantType, type ParticipantRef } from '../auth/participant';
import { ADMIN_PRINCIPAL, PrincipalKind, type Principal } from '../auth/principal';
import { agentClaims, AGENTS_COLLECTION } from '../registry/agent-store';
import { ChangeLog } from '../store/change-log';
import type { Store } from '../store/mongo';
import type { Migration } from './migration';

/** What older versions stored: owners, creators and those shared with as bare ids. */
interface LegacyAgent {
  _id: string;
  version: number;
  ownerId?: string;
  sharedWith?: Array<string | ParticipantRef>;
}

interface LegacyKey {
  _id: string;
  kind: string;
  createdBy?: string | Principal;
}

/**
 * Types the principals that older versions stored as bare ids, where a human's `sub` could pass for
 * a service key or an agent. A bare owner is the service whose key has that id, else a human; a
 * bare `sharedWith` id is the agent with that id, else a human; a bare key creator is the admin
 * ("admin") or a service. Idempotent: a second run finds nothing bare.
 */
export const typedPrincipals: Migration = {
  name: 'typed principals',
  async run(store: Store): Promise<number> {
    const keys = store.collection<LegacyKey>(API_KEYS_COLLECTION);
    const agents = store.collection<LegacyAgent>(AGENTS_COLLECTION);
    const changes = new ChangeLog(store, AGENTS_COLLECTION);
    let changed = 0;

    const legacyKeys = await keys.find({ createdBy: { $type: 'string' } }, { projection: { createdBy: 1 } }).toArray();
    for (const key of legacyKeys) {
      const createdBy =
        key.createdBy === ADMIN_PRINCIPAL.id
          ? ADMIN_PRINCIPAL
          : { kind: PrincipalKind.SERVICE, id: key.createdBy as string };
      changed += (await keys.updateOne({ _id: key._id, createdBy: key.createdBy }, { $set: { createdBy } }))
        .modifiedCount;
    }

    const legacyAgents = await agents
      .find({ $or: [{ ownerId: { $exists: true } }, { sharedWith: { $type: 'string' } }] }, { projection: { _id: 1 } })
      .toArray();
    if (legacyAgents.length === 0) return changed;
    const serviceIds = await idsOf(keys.find({ kind: PrincipalKind.SERVICE }, { projection: { _id: 1 } }).toArray());
    const agentIds = await idsOf(agents.find({}, { projection: { _id: 1 } }).toArray());
    const typed = (agent: LegacyAgent) => {
      const sharedWith = (agent.sharedWith ?? []).map((entry) =>
        typeof entry === 'string'
          ? { type: agentIds.has(entry) ? ParticipantType.AGENT : ParticipantType.HUMAN, id: entry }
          : entry,
      );
      const owner =
        agent.ownerId === undefined
          ? undefined
          : { kind: serviceIds.has(agent.ownerId) ? PrincipalKind.SERVICE : PrincipalKind.HUMAN, id: agent.ownerId };
      return { $set: { sharedWith, ...(owner ? { owner } : {}) }, $unset: { ownerId: '' as const } };
    };
    // Under the claim of the agent's version, as every write of an agent: on a store whose updates are
    // not atomic, a process starting meanwhile and sealing the agent's secret would write the bare ids back.
    const claims = agentClaims(store);
    for (const { _id } of legacyAgents) {
      let modified = 0;
      await claims.atCurrentVersion(_id, async (version) => {
        const agent = await agents.findOne({ _id, version }, { projection: { ownerId: 1, sharedWith: 1 } });
        // Typed meanwhile by another process's start: nothing left to write.
        if (!agent || !isBare(agent)) return { matchedCount: agent ? 1 : 0 };
        const result = await agents.updateOne({ _id, version }, typed(agent));
        modified = result.modifiedCount;
        return result;
      });
      changed += modified;
      // Processes already serving (a rolling upgrade) refresh the agent in their directories.
      if (modified > 0) await changes.record(_id);
    }
    return changed;
  },
};

const isBare = (agent: Pick<LegacyAgent, 'ownerId' | 'sharedWith'>) =>
  agent.ownerId !== undefined || (agent.sharedWith ?? []).some((entry) => typeof entry === 'string');

async function idsOf(documents: Promise<Array<{ _id: string }>>): Promise<Set<string>> {
  return new Set((await documents).map((document) => document._id));
}
