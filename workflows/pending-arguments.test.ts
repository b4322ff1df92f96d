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
});
