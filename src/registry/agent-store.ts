import type { Principal } from '../auth/principal';
import type { Store } from '../store/mongo';
import { canSee, type Agent, type AgentDocument } from './agent';

export const AGENTS_COLLECTION = 'agents';

export function toDocument(agent: Agent, derived: Pick<AgentDocument, 'operations' | 'searchTokens'>): AgentDocument {
  const { id, capabilities, ...rest } = agent;
  return { _id: id, capabilities: JSON.stringify(capabilities), ...rest, ...derived };
}

export function fromDocument(document: AgentDocument): Agent {
  const { _id, capabilities, operations: _operations, searchTokens: _searchTokens, ...rest } = document;
  return { id: _id, capabilities: JSON.parse(capabilities), ...rest };
}

/** Agents in MongoDB. Every read that serves a caller goes through the visibility rule in `canSee`. */
export class AgentStore {
  constructor(private readonly store: Store) {}

  static indexes() {
    return [
      { key: { searchTokens: 1 }, name: 'by_search_token' },
      { key: { operations: 1 }, name: 'by_operation' },
      { key: { ownerId: 1 }, name: 'by_owner' },
    ];
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
    const agent = await this.findById(agentId);
    return agent && canSee(principal, agent) ? agent : null;
  }
}
