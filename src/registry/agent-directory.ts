import type { Principal } from '../auth/principal';
import { StampedCopy } from '../store/change-stamp';
import { byId, firstAfter } from '../store/first-after';
import { canSee, ifVisible, type Agent } from './agent';
import type { AgentStore, DirectoryEntry } from './agent-store';
import type { SearchCandidate } from './search';

/** A directory older than this is read again even when no change was announced (a process that died between a write and its announcement). */
export const DIRECTORY_MAX_AGE_MS = 60_000;

interface Snapshot {
  /** In agentId order. */
  entries: DirectoryEntry[];
  /** Entries by search token: the candidates of a search without looking at every agent. */
  byToken: Map<string, DirectoryEntry[]>;
}

/**
 * What lists and searches of agents need, for every agent, in memory: FerretDB reads the whole
 * collection for any query beyond `_id`, and agents change rarely. Every change through AgentStore,
 * in any process, bumps its ChangeStamp, and the directory is read again when that differs
 * (StampedCopy): every process lists a change from the next request on. The agents of a page are
 * then read by `_id`, and visibility is `canSee` on the entry (to choose) and on the agent read (to answer).
 */
export class AgentDirectory {
  private readonly copy: StampedCopy<Snapshot>;

  constructor(private readonly agents: AgentStore) {
    this.copy = new StampedCopy(agents.changes, () => this.read(), DIRECTORY_MAX_AGE_MS);
  }

  /** One page of the agents `principal` may see, in agentId order, after the agentId `after`; with `operation`, only agents that registered it. */
  async listVisible(principal: Principal, page: { limit: number; after?: string }, operation?: string): Promise<Agent[]> {
    const { entries } = await this.copy.current();
    const ids: string[] = [];
    for (let index = firstAfter(entries, page.after); index < entries.length && ids.length < page.limit; index += 1) {
      const entry = entries[index];
      if (canSee(principal, entry) && (operation === undefined || entry.operations.includes(operation))) ids.push(entry.id);
    }
    return this.findVisibleByIds(principal, ids);
  }

  /** Visible agents sharing at least one search token with the query, at most `bound` of them, with only what ranking needs. */
  async searchCandidates(principal: Principal, tokens: string[], operation: string | undefined, bound: number): Promise<SearchCandidate[]> {
    const { byToken } = await this.copy.current();
    const found = new Map<string, SearchCandidate>();
    for (const token of tokens) {
      for (const entry of byToken.get(token) ?? []) {
        if (found.size >= bound) return [...found.values()];
        if (found.has(entry.id) || !canSee(principal, entry) || (operation !== undefined && !entry.operations.includes(operation))) continue;
        found.set(entry.id, { id: entry.id, name: entry.name, searchFields: entry.searchFields });
      }
    }
    return [...found.values()];
  }

  /** The agents of `agentIds` that `principal` may see, in the order of `agentIds`: one read by `_id` each. */
  async findVisibleByIds(principal: Principal, agentIds: string[]): Promise<Agent[]> {
    const agents = await Promise.all(agentIds.map(async (agentId) => ifVisible(principal, await this.agents.findById(agentId))));
    return agents.filter((agent): agent is Agent => agent !== null);
  }

  private async read(): Promise<Snapshot> {
    const entries = (await this.agents.directoryEntries()).sort(byId);
    const byToken = new Map<string, DirectoryEntry[]>();
    for (const entry of entries) {
      for (const token of entry.searchTokens) {
        const list = byToken.get(token);
        if (list) list.push(entry);
        else byToken.set(token, [entry]);
      }
    }
    return { entries, byToken };
  }
}
