import type { Principal } from '../auth/principal';
import { canSee, ifVisible, type Agent } from './agent';
import type { AgentStore, DirectoryEntry } from './agent-store';
import type { SearchCandidate } from './search';

/** A directory older than this is read again even when no change was announced (a process that died between a write and its announcement). */
export const DIRECTORY_MAX_AGE_MS = 60_000;

interface Snapshot {
  stamp: string | undefined;
  readAt: number;
  /** In agentId order. */
  entries: DirectoryEntry[];
  /** Entries by search token: the candidates of a search without looking at every agent. */
  byToken: Map<string, DirectoryEntry[]>;
}

/**
 * What lists and searches of agents need, for every agent, in memory: FerretDB reads the whole
 * collection for any query beyond `_id`, and agents change rarely. Every change through AgentStore,
 * in any process, writes a new stamp (one document read by `_id`); a request reads the stamp and
 * reads the directory again only when it changed, one reload at a time per process. So a change is
 * listed by every process from the next request on. The agents of a page are then read by `_id`,
 * and visibility is `canSee` on the entry (to choose) and on the agent read (to answer).
 */
export class AgentDirectory {
  private snapshot?: Snapshot;
  private reading?: { stamp: string | undefined; snapshot: Promise<Snapshot> };

  constructor(private readonly agents: AgentStore) {}

  /** One page of the agents `principal` may see, in agentId order, after the agentId `after`; with `operation`, only agents that registered it. */
  async listVisible(principal: Principal, page: { limit: number; after?: string }, operation?: string): Promise<Agent[]> {
    const { entries } = await this.current();
    const ids: string[] = [];
    for (let index = firstAfter(entries, page.after); index < entries.length && ids.length < page.limit; index += 1) {
      const entry = entries[index];
      if (canSee(principal, entry) && (operation === undefined || entry.operations.includes(operation))) ids.push(entry.id);
    }
    return this.findVisibleByIds(principal, ids);
  }

  /** Visible agents sharing at least one search token with the query, at most `bound` of them, with only what ranking needs. */
  async searchCandidates(principal: Principal, tokens: string[], operation: string | undefined, bound: number): Promise<SearchCandidate[]> {
    const { byToken } = await this.current();
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

  private async current(): Promise<Snapshot> {
    const stamp = await this.agents.directoryStamp();
    const snapshot = this.snapshot;
    if (snapshot && snapshot.stamp === stamp && Date.now() - snapshot.readAt < DIRECTORY_MAX_AGE_MS) return snapshot;
    if (this.reading && this.reading.stamp === stamp) return this.reading.snapshot;
    // The stamp is read before the agents: a change announced after this read makes the next request read again.
    const reading = { stamp, snapshot: this.read(stamp) };
    this.reading = reading;
    try {
      this.snapshot = await reading.snapshot;
      return this.snapshot;
    } finally {
      if (this.reading === reading) this.reading = undefined;
    }
  }

  private async read(stamp: string | undefined): Promise<Snapshot> {
    const readAt = Date.now();
    const entries = (await this.agents.directoryEntries()).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const byToken = new Map<string, DirectoryEntry[]>();
    for (const entry of entries) {
      for (const token of entry.searchTokens) {
        const list = byToken.get(token);
        if (list) list.push(entry);
        else byToken.set(token, [entry]);
      }
    }
    return { stamp, readAt, entries, byToken };
  }
}

/** The index of the first entry whose id sorts after `after` (binary search). */
function firstAfter(entries: DirectoryEntry[], after: string | undefined): number {
  if (after === undefined) return 0;
  let [low, high] = [0, entries.length];
  while (low < high) {
    const middle = (low + high) >> 1;
    if (entries[middle].id <= after) low = middle + 1;
    else high = middle;
  }
  return low;
}
