import type { Principal } from '../auth/principal';
import { IdIndex, KeyedIdIndex } from '../store/id-index';
import { LiveCopy, type Freshness } from '../store/live-copy';
import { RecordCache } from '../store/record-cache';
import { canSee, type ListedAgent } from './agent';
import type { AgentStore, DirectoryEntry } from './agent-store';
import type { SearchCandidate } from './search';

/** The directory is read whole again, in the background, after this long, whatever the change log says. */
export const DIRECTORY_MAX_AGE_MS = 10 * 60_000;

/**
 * What lists and searches of agents need, for every agent, in memory: a query beyond `_id` may read the
 * whole collection (src/store/mongo.ts). Every change through AgentStore, in any process, is
 * recorded in its ChangeLog, and each request first refreshes the agents changed since (LiveCopy):
 * every process lists a change from the next request on. The agents of a page come from a cache of
 * agents as lists show them, which forgets an agent when the log names it: only those not read
 * since they last changed are read by `_id`. Visibility is `canSee` on the entry (to choose) and on
 * the agent (to answer). A caller that accepts a bound on freshness (`Freshness`) may be served
 * from a read of the log made for another request; a change made through this process still
 * shows at once.
 */
export class AgentDirectory {
  private entries = new IdIndex<DirectoryEntry>();
  private byToken = new KeyedIdIndex<DirectoryEntry>();
  private readonly copy: LiveCopy<DirectoryEntry[]>;
  private readonly listed: RecordCache<ListedAgent>;
  /** Counts the times the directory was installed whole or refreshed. */
  private updates = 0;

  constructor(private readonly agents: AgentStore) {
    this.listed = new RecordCache((agentId) => this.agents.findListed(agentId));
    this.copy = new LiveCopy(
      agents.changes,
      {
        load: () => this.agents.directoryEntries(),
        install: (entries) => this.install(entries),
        refresh: (ids) => this.refresh(ids),
      },
      DIRECTORY_MAX_AGE_MS,
    );
    agents.onChange(() => this.copy.changedHere());
  }

  /** A number that moves whenever what the directory holds may have changed: equal, and nothing did. */
  get generation(): number {
    return this.updates;
  }

  /** Brings the directory up to every change recorded before this call, or within `freshness`. */
  catchUp(freshness?: Freshness): Promise<void> {
    return this.copy.catchUp(freshness);
  }

  /** Starts reading the directory whole, so that the first request does not wait for all of it. */
  warm(): void {
    this.copy.catchUp().catch(() => undefined);
  }

  /** One page of the agents `principal` may see, in agentId order, after the agentId `after`; with `operation`, only agents that registered it. */
  async listVisible(
    principal: Principal,
    page: { limit: number; after?: string },
    operation?: string,
    freshness?: Freshness,
  ): Promise<ListedAgent[]> {
    await this.copy.catchUp(freshness);
    const chosen = this.entries.page(
      page.limit,
      page.after,
      (entry) => canSee(principal, entry) && (operation === undefined || entry.operations.includes(operation)),
    );
    return this.findVisibleByIds(
      principal,
      chosen.map((entry) => entry.id),
    );
  }

  /** Visible agents sharing at least one search token with the query, at most `bound` of them, with only what ranking needs. */
  async searchCandidates(
    principal: Principal,
    tokens: string[],
    operation: string | undefined,
    bound: number,
  ): Promise<SearchCandidate[]> {
    await this.copy.catchUp();
    const found = new Map<string, SearchCandidate>();
    for (const token of tokens) {
      const accept = (entry: DirectoryEntry) =>
        !found.has(entry.id) &&
        canSee(principal, entry) &&
        (operation === undefined || entry.operations.includes(operation));
      for (const entry of this.byToken.get(token)?.page(bound - found.size, undefined, accept) ?? []) {
        found.set(entry.id, { id: entry.id, name: entry.name, searchFields: entry.searchFields });
      }
    }
    return [...found.values()];
  }

  /** The agents of `agentIds` that `principal` may see, in the order of `agentIds`: read by `_id` those not read since they changed. */
  async findVisibleByIds(principal: Principal, agentIds: string[]): Promise<ListedAgent[]> {
    return (await this.listed.getMany(agentIds)).filter((agent) => canSee(principal, agent));
  }

  private install(all: DirectoryEntry[]): void {
    const [entries, byToken] = [new IdIndex<DirectoryEntry>(), new KeyedIdIndex<DirectoryEntry>()];
    for (const entry of all) {
      entries.set(entry);
      byToken.set(entry, entry.searchTokens);
    }
    [this.entries, this.byToken] = [entries, byToken];
    this.listed.clear();
    this.updates += 1;
  }

  private async refresh(agentIds: string[]): Promise<void> {
    const read = await Promise.all(
      agentIds.map(async (agentId) => [agentId, await this.agents.directoryEntry(agentId)] as const),
    );
    this.updates += 1;
    for (const [agentId, entry] of read) {
      this.listed.forget(agentId);
      const previous = this.entries.get(agentId);
      if (previous) this.byToken.delete(agentId, previous.searchTokens);
      if (entry) {
        this.entries.set(entry);
        this.byToken.set(entry, entry.searchTokens);
      } else {
        this.entries.delete(agentId);
      }
    }
  }
}
