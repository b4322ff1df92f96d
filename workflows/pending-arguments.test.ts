import { isPendingArgument, substitute } from './pending-arguments';

const from = (taskId: string, field: string, type?: string) => ({
  source: { taskId, field },
  ...(type ? { type } : {}),
});

describe('pending arguments', () => {
  it('recognises only {source: {taskId, field}} values', () => {
    expect(isPendingArgument(from('0', 'a'))).toBe(true);
    expect(isPendingArgument({ source: { taskId: 0, field: 'a' } })).toBe(false);
    expect(isPendingArgument({ source: 'x' })).toBe(false);
    expect(isPendingArgument([from('0', 'a')])).toBe(false);
  });

  it("substitutes fields of parents' results and keeps literals", () => {
    const results = [{ text: 'hi', n: 2, list: [1], obj: { a: 1 }, 0: true }];
    expect(
      substitute(
        {
          a: from('0', 'text', 'string'),
          b: from('0', 'n', 'integer'),
          c: from('0', 'list', 'array'),
          d: from('0', 'obj', 'object'),
          e: from('0', '0', 'boolean'),
          f: 'literal',
        },
        results,
      ),
    ).toEqual({
      params: { a: 'hi', b: 2, c: [1], d: { a: 1 }, e: true, f: 'literal' },
    });
  });

  it('resolves an argument on a parent without result (it failed) to null', () => {
    expect(substitute({ a: from('0', 'text', 'string') }, [undefined])).toEqual({ params: { a: null } });
  });

  it('reports MISSING_FIELD and TYPE_MISMATCH', () => {
    expect(substitute({ a: from('0', 'nope') }, [{ text: 'hi' }])).toMatchObject({ error: { code: 'MISSING_FIELD' } });
    expect(substitute({ a: from('0', 'list', 'object') }, [{ list: [] }])).toMatchObject({
      error: { code: 'TYPE_MISMATCH', details: { expected: 'object', actual: 'array' } },
    });
    expect(substitute({ a: from('0', 'n', 'integer') }, [{ n: 1.5 }])).toMatchObject({
      error: { code: 'TYPE_MISMATCH' },
    });
  });

  it('does not take inherited properties for fields', () => {
    expect(substitute({ a: from('0', 'toString') }, [{}])).toMatchObject({ error: { code: 'MISSING_FIELD' } });
  });

  it('keeps a param named __proto__ as a field, substituted or literal', () => {
    const params = JSON.parse('{"__proto__": {"polluted": true}, "constructor": 1}');
    params.b = from('0', 'text');
    const substituted = substitute(params, [{ text: 'hi' }]);
    expect(JSON.stringify(substituted)).toBe('{"params":{"__proto__":{"polluted":true},"constructor":1,"b":"hi"}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reads a JSON Pointer field into objects and arrays, after a top-level member of the same name', () => {
    const mcpAnswer = { content: [{ type: 'text', text: 'The sum is 5.' }], 'a/b': { '~': 1 }, '/x': 'member' };
    expect(
      substitute(
        {
          text: from('0', '/content/0/text', 'string'),
          escaped: from('0', '/a~1b/~0', 'integer'),
          member: from('0', '/x', 'string'),
          whole: from('0', '/content', 'array'),
        },
        [mcpAnswer],
      ),
    ).toEqual({
      params: { text: 'The sum is 5.', escaped: 1, member: 'member', whole: mcpAnswer.content },
    });
    for (const field of ['/content/1/text', '/content/01/text', '/content/-', '/nope', '/content/0/text/x'])
      expect(substitute({ a: from('0', field) }, [mcpAnswer])).toMatchObject({ error: { code: 'MISSING_FIELD' } });
  });

  it('reads top-level members only in runs that began before pointers', () => {
    expect(substitute({ a: from('0', '/content/0') }, [{ content: ['x'] }], false)).toMatchObject({
      error: { code: 'MISSING_FIELD' },
    });
  });
});
