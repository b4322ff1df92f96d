import { CAPABILITY_CATEGORIES, type Agent, type AgentDocument, type SearchField } from './agent';

/**
 * Search without `$text`, which not every store has (src/store/mongo.ts): every agent stores the normalised words of its name,
 * description and tool names and descriptions in `searchTokens`, the directory (agent-directory.ts)
 * finds the candidates sharing a word with the query, and the few candidates are ranked here.
 */

const MAX_TOKEN_CHARS = 64;
const MAX_QUERY_TOKENS = 16;
const MAX_FIELD_TOKENS = 1_000;

/** Field weights: a word in the name says more about an agent than one in a tool's description. */
const WEIGHTS: Record<SearchField, number> = { name: 8, toolName: 4, description: 2, toolDescription: 1 };

/** What ranking needs of an agent: read with a projection, never the whole capabilities. */
export interface SearchCandidate extends Pick<AgentDocument, 'name' | 'searchFields'> {
  id: string;
}

/** Lower-cased words of letters and digits; a compound like `translate_text` also stays whole. */
export function tokenize(text: string): string[] {
  const lower = text.toLowerCase();
  const words = lower.split(/[^\p{L}\p{N}]+/u);
  const compounds = lower.split(/[^\p{L}\p{N}_.-]+/u);
  const tokens = new Set<string>();
  for (const word of [...words, ...compounds]) {
    // A compound must hold a letter or digit: "..." or "--" is no word.
    if (word.length <= MAX_TOKEN_CHARS && /[\p{L}\p{N}]/u.test(word)) tokens.add(word);
  }
  return [...tokens];
}

/** The query's words, bounded so one request cannot ask the index for thousands of keys. */
export function queryTokens(query: string): string[] {
  return tokenize(query).slice(0, MAX_QUERY_TOKENS);
}

/** The fields stored beside an agent's JSON capabilities so that queries are served by indexes. */
export function derivedFields(
  agent: Pick<Agent, 'name' | 'description' | 'capabilities'>,
): Pick<AgentDocument, 'operations' | 'searchTokens' | 'searchFields'> {
  const operations = CAPABILITY_CATEGORIES.flatMap((category) =>
    (agent.capabilities[category] ?? []).map((entry) => `${category}/${entry.name}`),
  );
  const wordsOf = (texts: string[]) => [...new Set(texts.flatMap(tokenize))].slice(0, MAX_FIELD_TOKENS);
  const { tools } = agent.capabilities;
  const searchFields = {
    name: wordsOf([agent.name]),
    toolName: wordsOf(tools.map((tool) => tool.name)),
    description: wordsOf([agent.description]),
    toolDescription: wordsOf(tools.map((tool) => tool.description)),
  };
  return { operations, searchTokens: [...new Set(Object.values(searchFields).flat())], searchFields };
}

/** How well a candidate matches the query's tokens: weighted by the field each token appears in. */
export function relevance(candidate: Pick<SearchCandidate, 'searchFields'>, tokens: string[]): number {
  let score = 0;
  for (const [field, weight] of Object.entries(WEIGHTS) as Array<[SearchField, number]>) {
    // Agents stored by the first registry commits have no searchFields: they rank last, not fail.
    const words = new Set(candidate.searchFields?.[field] ?? []);
    for (const token of tokens) if (words.has(token)) score += weight;
  }
  return score;
}

/** Candidates ordered by relevance, best first; ties by name then id so the order (and `after` paging) is stable. */
export function rank(candidates: SearchCandidate[], tokens: string[]): SearchCandidate[] {
  return candidates
    .map((candidate) => ({ candidate, score: relevance(candidate, tokens) }))
    .sort(
      (a, b) =>
        b.score - a.score ||
        a.candidate.name.localeCompare(b.candidate.name) ||
        a.candidate.id.localeCompare(b.candidate.id),
    )
    .map(({ candidate }) => candidate);
}
