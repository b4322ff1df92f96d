import type { Principal } from '../auth/principal';
import type { ListedAgent } from './agent';
import type { AgentDirectory } from './agent-directory';
import { queryTokens, rank } from './search';

/** Most agents a search ranks: candidates come from the directory's token index, never every agent. */
const SEARCH_CANDIDATES = 1_000;

/** A search as a caller asks it: the A2A directory's `search-agents` skill, /mcp's `search_agents` tool. */
export interface SearchAgentsParams {
  query?: string;
  capability?: string;
  limit?: number;
  after?: string;
}

/** The most agents one search answers, and how many when the caller does not say. */
export const SEARCH_AGENTS_PAGE = { max: 100, default: 20 } as const;

/** The JSON Schema of a search as a caller asks it, as the cards and tool lists publish it too. */
export const SEARCH_AGENTS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    query: { type: 'string', maxLength: 1_000, description: 'Words to rank agents by; none lists them in id order' },
    capability: {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      description: 'Only agents that registered this operation, tools/translate say',
    },
    limit: { type: 'integer', minimum: 1, maximum: SEARCH_AGENTS_PAGE.max, default: SEARCH_AGENTS_PAGE.default },
    after: { type: 'string', minLength: 1, maxLength: 256, description: "The previous answer's `next`" },
  },
} as const;

export interface AgentSearch {
  /** Words to rank by (names, descriptions, tools); none lists the agents in id order. */
  query?: string;
  /** Only agents that registered this operation, `tools/translate` say. */
  capability?: string;
  limit: number;
  /** The last agentId of the previous page. */
  after?: string;
}

/**
 * One page of the agents `principal` may see that match `search`: ranked by the query's words, or,
 * without a query, listed in id order. A query without a single word matches nothing.
 */
export async function searchAgents(
  directory: Pick<AgentDirectory, 'listVisible' | 'searchCandidates' | 'findVisibleByIds'>,
  principal: Principal,
  search: AgentSearch,
): Promise<ListedAgent[]> {
  const page = { limit: search.limit, after: search.after };
  const tokens = queryTokens(search.query ?? '');
  if (tokens.length === 0) return search.query?.trim() ? [] : directory.listVisible(principal, page, search.capability);
  const ranked = rank(
    await directory.searchCandidates(principal, tokens, search.capability, SEARCH_CANDIDATES),
    tokens,
  );
  // An `after` no longer among the matches ends the paging rather than starting it over.
  const start =
    page.after === undefined ? 0 : ranked.findIndex((candidate) => candidate.id === page.after) + 1 || ranked.length;
  return directory.findVisibleByIds(
    principal,
    ranked.slice(start, start + page.limit).map((candidate) => candidate.id),
  );
}
