import { derivedFields, queryTokens, rank, relevance, tokenize } from './search';

/** A candidate as the store returns it, derived the way a registration is. */
const agent = (id: string, name: string, description = '', tools: Array<[string, string]> = []) => {
  const capabilities = {
    tools: tools.map(([toolName, toolDescription]) => ({
      name: toolName,
      description: toolDescription,
      inputSchema: {},
    })),
  };
  return { id, name, searchFields: derivedFields({ name, description, capabilities }).searchFields };
};

describe('search', () => {
  it('tokenizes into lower-case words and keeps compounds whole', () => {
    expect(tokenize('Translate_Text, v1.2 — Übersetzen!')).toEqual(
      expect.arrayContaining(['translate', 'text', 'translate_text', 'v1', '2', 'v1.2', 'übersetzen']),
    );
    expect(tokenize('  ...  ')).toEqual([]);
    expect(tokenize('x'.repeat(65))).toEqual([]);
  });

  it('bounds the words of a query', () => {
    expect(queryTokens(Array.from({ length: 100 }, (_, index) => `w${index}`).join(' '))).toHaveLength(16);
  });

  it('derives operations of every category and the words of name, description and tools', () => {
    const derived = derivedFields({
      name: 'Weather',
      description: 'Forecasts',
      capabilities: {
        tools: [{ name: 'get_forecast', description: 'For a city', inputSchema: {} }],
        prompts: [{ name: 'greet' }],
      },
    });
    expect(derived.operations).toEqual(['tools/get_forecast', 'prompts/greet']);
    expect(derived.searchTokens).toEqual(
      expect.arrayContaining(['weather', 'forecasts', 'get_forecast', 'forecast', 'city']),
    );
    expect(derived.searchFields).toEqual({
      name: ['weather'],
      toolName: expect.arrayContaining(['get', 'forecast', 'get_forecast']),
      description: ['forecasts'],
      toolDescription: ['for', 'a', 'city'],
    });
  });

  it('weighs name over tool name over description over tool description, and sums words', () => {
    const tokens = ['maps'];
    expect(relevance(agent('a', 'Maps'), tokens)).toBeGreaterThan(
      relevance(agent('b', 'x', '', [['maps', '']]), tokens),
    );
    expect(relevance(agent('b', 'x', '', [['maps', '']]), tokens)).toBeGreaterThan(
      relevance(agent('c', 'x', 'maps'), tokens),
    );
    expect(relevance(agent('c', 'x', 'maps'), tokens)).toBeGreaterThan(
      relevance(agent('d', 'x', '', [['t', 'maps']]), tokens),
    );
    expect(relevance(agent('e', 'Maps', 'maps'), tokens)).toBe(
      relevance(agent('f', 'Maps'), tokens) + relevance(agent('g', 'x', 'maps'), tokens),
    );
  });

  it('ranks best first, ties by name then id', () => {
    const ranked = rank(
      [agent('2', 'b', 'maps'), agent('1', 'b', 'maps'), agent('3', 'a', 'maps'), agent('4', 'maps')],
      ['maps'],
    );
    expect(ranked.map((found) => found.id)).toEqual(['4', '3', '1', '2']);
  });
});
