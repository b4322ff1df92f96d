import { CAPABILITY_CATEGORIES, type Agent, type AgentDocument } from './agent';

/**
 * Search without `$text` (FerretDB has none): every agent stores the normalised words of its name,
 * description and tool names and descriptions in `searchTokens`, a multikey index finds the
 * candidates sharing a word with the query, and the few candidates are ranked here.
 */

const MAX_TOKEN_CHARS = 64;
const MAX_QUERY_TOKENS = 16;
const MAX_STORED_TOKENS = 2_000;

/** Field weights: a word in the name says more about an agent than one in a tool's description. */
const WEIGHTS = { name: 8, toolName: 4, description: 2, toolDescription: 1 } as const;

/** Lower-cased words of letters and digits; a compound like `translate_text` also stays whole. */
export function tokenize(text: string): string[] {
  const lower = text.toLowerCase();
  const words = lower.split(/[^\p{L}\p{N}]+/u);
  const compounds = lower.split(/[^\p{L}\p{N}_.-]+/u);
  const tokens = new Set<string>();
  for (const word of [...words, ...compounds]) {
    if (word.length > 0 && word.length <= MAX_TOKEN_CHARS) tokens.add(word);
  }
  return [...tokens];
}

/** The query's words, bounded so one request cannot ask the index for thousands of keys. */
export function queryTokens(query: string): string[] {
  return tokenize(query).slice(0, MAX_QUERY_TOKENS);
}

/** The fields stored beside an agent's JSON capabilities so that queries are served by indexes. */
export function derivedFields(agent: Pick<Agent, 'name' | 'description' | 'capabilities'>): Pick<AgentDocument, 'operations' | 'searchTokens'> {
  const operations = CAPABILITY_CATEGORIES.flatMap((category) => (agent.capabilities[category] ?? []).map((entry) => `${category}/${entry.name}`));
  const texts = [agent.name, agent.description, ...agent.capabilities.tools.flatMap((tool) => [tool.name, tool.description])];
  const searchTokens = [...new Set(texts.flatMap(tokenize))].slice(0, MAX_STORED_TOKENS);
  return { operations, searchTokens };
}

/** How well `agent` matches the query's tokens: weighted by the field each token appears in. */
export function relevance(agent: Pick<Agent, 'name' | 'description' | 'capabilities'>, tokens: string[]): number {
  const fields: Array<[number, Set<string>]> = [
    [WEIGHTS.name, new Set(tokenize(agent.name))],
    [WEIGHTS.toolName, new Set(agent.capabilities.tools.flatMap((tool) => tokenize(tool.name)))],
    [WEIGHTS.description, new Set(tokenize(agent.description))],
    [WEIGHTS.toolDescription, new Set(agent.capabilities.tools.flatMap((tool) => tokenize(tool.description)))],
  ];
  let score = 0;
  for (const token of tokens) {
    for (const [weight, words] of fields) if (words.has(token)) score += weight;
  }
  return score;
}

/** Agents ordered by relevance, best first; ties by name then id so the order (and `after` paging) is stable. */
export function rank<T extends Pick<Agent, 'id' | 'name' | 'description' | 'capabilities'>>(agents: T[], tokens: string[]): T[] {
  return agents
    .map((agent) => ({ agent, score: relevance(agent, tokens) }))
    .sort((a, b) => b.score - a.score || a.agent.name.localeCompare(b.agent.name) || a.agent.id.localeCompare(b.agent.id))
    .map(({ agent }) => agent);
}
