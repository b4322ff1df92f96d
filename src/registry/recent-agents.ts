import type { Principal } from '../auth/principal';
import { ifVisible, type Agent } from './agent';
import type { AgentStore } from './agent-store';

/** How long an agent read for a task is used again without reading it anew. */
export const RECENT_AGENT_MAX_AGE_MS = 1_000;
/** More distinct agents than this within a second, and the cache starts over. */
const MAX_ENTRIES = 10_000;

/**
 * The agents that tasks were created for or called at in the last second. Every task reads its agent
 * twice (checking the request, making the call), each a store round trip that costs more CPU than
 * the rest of the lookup. A change made through this process (`AgentStore` writes) applies at once;
 * one made through another process applies within RECENT_AGENT_MAX_AGE_MS. Unknown ids are not
 * remembered, so an agent registered anywhere can take tasks at once.
 */
export class RecentAgents {
  private readonly entries = new Map<string, { agent: Agent; readAt: number }>();
  /** Counts the changes made through this process: a read that overlapped one is not kept. */
  private changes = 0;

  constructor(private readonly agents: AgentStore) {
    agents.onChange((agentId) => {
      this.changes += 1;
      this.entries.delete(agentId);
    });
  }

  async findById(agentId: string): Promise<Agent | null> {
    const entry = this.entries.get(agentId);
    if (entry && Date.now() - entry.readAt < RECENT_AGENT_MAX_AGE_MS) return entry.agent;
    const [readAt, changesBefore] = [Date.now(), this.changes];
    const agent = await this.agents.findById(agentId);
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    if (agent && this.changes === changesBefore) this.entries.set(agentId, { agent, readAt });
    else this.entries.delete(agentId);
    return agent;
  }

  /** The agent when it exists and `principal` may see it; null otherwise. */
  async findVisible(principal: Principal | undefined, agentId: string): Promise<Agent | null> {
    return ifVisible(principal, await this.findById(agentId));
  }
}
