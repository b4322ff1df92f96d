import { nestsDeeperThan } from '../http/json-depth';
import { SchemaRejected, USER_SCHEMA_LIMITS, UserSchemaCompiler } from './user-schemas';

describe('UserSchemaCompiler', () => {
  const compiler = new UserSchemaCompiler();

  it('compiles a typical tool schema and applies defaults', () => {
    const validate = compiler.compile({
      type: 'object',
      properties: { text: { type: 'string', description: 'what to say' }, loud: { type: 'boolean', default: false }, at: { type: 'string', format: 'date-time' } },
      required: ['text'],
    });
    const params: Record<string, unknown> = { text: 'hi' };
    expect(validate(params)).toBe(true);
    expect(params).toEqual({ text: 'hi', loud: false });
    expect(validate({ text: 'hi', at: 'yesterday' })).toBe(false);
  });

  it.each([
    ['an unknown keyword', { type: 'object', frobnicate: true }, /unknown keyword/],
    ['a remote $ref', { $ref: 'https://example.com/schema.json' }, /can't resolve reference/],
    ['a wrong type name', { type: 'strin' }, /type must be/],
    ['a non-object', ['type', 'string'], /JSON object/],
    ['an $async schema', { $async: true, type: 'object' }, /must not be \$async/],
    ['deep nesting', JSON.parse(`${'{"not":'.repeat(40)}{}${'}'.repeat(40)}`), /nest at most/],
  ])('rejects %s', (_what, schema, message) => {
    expect(() => compiler.compile(schema as never)).toThrow(SchemaRejected);
    expect(() => compiler.compile(schema as never)).toThrow(message);
  });

  it('runs pattern and patternProperties as RE2', () => {
    const validate = compiler.compile({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } }, patternProperties: { '^x-\\d+$': { type: 'number' } } });
    expect(validate({ s: 'aaa', 'x-1': 1 })).toBe(true);
    expect(validate({ s: 'aaab' })).toBe(false);
    expect(validate({ 'x-2': 'not a number' })).toBe(false);
    expect(() => compiler.compile({ type: 'string', pattern: '(a)\\1' })).toThrow(/invalid escape sequence/);
  });

  it('compiles a schema that refers to its own root', () => {
    const validate = compiler.compile({ type: 'object', properties: { child: { $ref: '#' } } });
    expect(validate({ child: { child: {} } })).toBe(true);
    expect(validate({ child: { child: 1 } })).toBe(false);
  });

  it('checks depth without recursion on absurdly deep input', () => {
    let deep: unknown = {};
    for (let level = 0; level < 200_000; level += 1) deep = { a: deep };
    expect(nestsDeeperThan(deep, 32)).toBe(true);
    expect(() => compiler.compile(deep as never)).toThrow(/nest at most/);
  });

  it('compiles a cached schema once per key', () => {
    const counting = new UserSchemaCompiler();
    const compile = jest.spyOn(counting, 'compile');
    const schema = { type: 'object' };
    counting.cached('agent@1:tools/x', schema);
    counting.cached('agent@1:tools/x', schema);
    expect(compile).toHaveBeenCalledTimes(1);
    counting.cached('agent@2:tools/x', schema);
    expect(compile).toHaveBeenCalledTimes(2);
  });
  describe('uniqueItems over items that may be objects or arrays', () => {
    const bound = USER_SCHEMA_LIMITS.maxItemsComparedPairwise;
    const refusal = (schema: unknown): SchemaRejected | undefined => {
      try {
        compiler.compile(schema as never);
        return undefined;
      } catch (error) {
        if (error instanceof SchemaRejected) return error;
        throw error;
      }
    };

    it.each([
      ['no items schema', { type: 'array', uniqueItems: true }, '/uniqueItems'],
      ['object items', { type: 'object', properties: { list: { type: 'array', items: { type: 'object' }, uniqueItems: true } } }, '/properties/list/uniqueItems'],
      ['items that may be arrays', { type: 'array', items: { type: ['string', 'array'] }, uniqueItems: true }, '/uniqueItems'],
      ['items without a type', { type: 'array', items: { enum: ['a', 'b'] }, uniqueItems: true }, '/uniqueItems'],
      ['items given by $ref (the check does not follow it)', { definitions: { s: { type: 'string' } }, type: 'array', items: { $ref: '#/definitions/s' }, uniqueItems: true }, '/uniqueItems'],
      ['tuple items', { type: 'array', items: [{ type: 'string' }], uniqueItems: true }, '/uniqueItems'],
      ['maxItems above the bound', { type: 'array', items: { type: 'object' }, uniqueItems: true, maxItems: bound + 1 }, '/uniqueItems'],
      ['maxItems in another schema only', { allOf: [{ maxItems: 1 }, { uniqueItems: true }] }, '/allOf/1/uniqueItems'],
      ['an array inside an array', { type: 'array', maxItems: 1, items: { type: 'array', uniqueItems: true } }, '/items/uniqueItems'],
      ['a definition with an escaped name', { definitions: { 'a/b~c': { uniqueItems: true } } }, '/definitions/a~1b~0c/uniqueItems'],
      ['an anyOf branch', { anyOf: [{ type: 'string' }, { type: 'array', uniqueItems: true }] }, '/anyOf/1/uniqueItems'],
      ['additionalProperties', { type: 'object', additionalProperties: { uniqueItems: true } }, '/additionalProperties/uniqueItems'],
      ['a dependency', { type: 'object', dependencies: { a: { properties: { b: { uniqueItems: true } } } } }, '/dependencies/a/properties/b/uniqueItems'],
    ])('refuses %s, naming the JSON pointer', (_what, schema, pointer) => {
      const error = refusal(schema);
      expect({ refused: error instanceof SchemaRejected, pointer: error?.pointer }).toEqual({ refused: true, pointer });
      expect(error!.message).toBe(
        `uniqueItems at ${pointer} compares items that may be objects or arrays pair by pair, in time that grows with the square of their number: ` +
          `give that schema maxItems of at most ${bound}, or items of scalar types`,
      );
    });

    it.each([
      ['scalar items', { type: 'array', items: { type: 'string' }, uniqueItems: true }, ['a', 'a']],
      ['scalar or null items', { type: 'array', items: { type: ['integer', 'null'] }, uniqueItems: true }, [null, null]],
      ['object items within maxItems', { type: 'array', items: { type: 'object' }, uniqueItems: true, maxItems: bound }, [{ a: 1 }, { a: 1 }]],
      ['items of any type within maxItems', { type: 'array', uniqueItems: true, maxItems: bound }, [[1], [1]]],
    ])('accepts %s and still refuses duplicates', (_what, schema, duplicates) => {
      const validate = compiler.compile(schema as never);
      expect(validate(duplicates)).toBe(false);
      expect(validate(duplicates.slice(0, 1))).toBe(true);
    });

    it('accepts uniqueItems false, and the word where it is a property name or data', () => {
      const schema = {
        type: 'object',
        properties: { uniqueItems: { const: { uniqueItems: true } }, list: { type: 'array', uniqueItems: false } },
        examples: [{ uniqueItems: { uniqueItems: true } }],
      };
      expect(refusal(schema)).toBeUndefined();
    });
  });
});
