import { nestsDeeperThan } from '../http/json-depth';
import { SchemaRejected, USER_SCHEMA_LIMITS, UserSchemaCompiler } from './compiler';

describe('UserSchemaCompiler', () => {
  const compiler = new UserSchemaCompiler();

  it('compiles a typical tool schema and applies defaults', () => {
    const validate = compiler.compile({
      type: 'object',
      properties: {
        text: { type: 'string', description: 'what to say' },
        loud: { type: 'boolean', default: false },
        at: { type: 'string', format: 'date-time' },
      },
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
    const validate = compiler.compile({
      type: 'object',
      properties: { s: { type: 'string', pattern: '^(a+)+$' } },
      patternProperties: { '^x-\\d+$': { type: 'number' } },
    });
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
    counting.cached('agent@1:tools/x', () => schema);
    counting.cached('agent@1:tools/x', () => schema);
    expect(compile).toHaveBeenCalledTimes(1);
    counting.cached('agent@2:tools/x', () => schema);
    expect(compile).toHaveBeenCalledTimes(2);
  });
  describe('dialects: 2020-12 by default, draft-07 when declared', () => {
    const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
    const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

    it.each([
      ['declared', { $schema: DRAFT_2020 }],
      ['by default', {}],
    ])('reads 2020-12 %s: prefixItems, items after them, unevaluatedProperties', (_how, declaration) => {
      const validate = compiler.compile({
        ...declaration,
        type: 'object',
        properties: {
          point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false },
        },
        allOf: [{ properties: { label: { type: 'string' } } }],
        unevaluatedProperties: false,
      });
      expect(validate({ point: [1, 2], label: 'a' })).toBe(true);
      expect(validate({ point: [1, 'two'] })).toBe(false);
      expect(validate({ point: [1, 2, 3] })).toBe(false);
      expect(validate({ point: [1, 2], other: true })).toBe(false);
      expect(validate.errors?.[0]).toMatchObject({ keyword: 'unevaluatedProperties' });
    });

    it('reads $defs with $ref, $anchor, dependentSchemas, dependentRequired, minContains and unevaluatedItems in 2020-12', () => {
      const validate = compiler.compile({
        $schema: DRAFT_2020,
        type: 'object',
        $defs: {
          tag: { $anchor: 'tag', type: 'string', minLength: 1 },
          tags: { type: 'array', items: { $ref: '#tag' }, minContains: 2, contains: { const: 'x' } },
        },
        properties: {
          tags: { $ref: '#/$defs/tags' },
          pair: { type: 'array', allOf: [{ prefixItems: [{ type: 'string' }] }], unevaluatedItems: { type: 'number' } },
          card: { type: 'string' },
        },
        dependentSchemas: { card: { required: ['billing'] } },
        dependentRequired: { billing: ['card'] },
      });
      expect(validate({ tags: ['x', 'x', 'y'], pair: ['a', 1, 2], card: 'c', billing: 'b' })).toBe(true);
      expect(validate({ tags: ['x', ''] })).toBe(false);
      expect(validate({ tags: ['x', 'y'] })).toBe(false);
      expect(validate({ pair: ['a', 'b'] })).toBe(false);
      expect(validate({ card: 'c' })).toBe(false);
      expect(validate({ billing: 'b' })).toBe(false);
    });

    it.each([
      ['with its #', DRAFT_07],
      ['without its #', 'http://json-schema.org/draft-07/schema'],
    ])(
      'reads draft-07 when a schema declares it %s: list items, additionalItems, dependencies, $id anchors',
      (_how, $schema) => {
        const validate = compiler.compile({
          $schema,
          type: 'object',
          definitions: { name: { $id: '#name', type: 'string' } },
          properties: {
            pair: { type: 'array', items: [{ $ref: '#name' }], additionalItems: { type: 'number' } },
          },
          dependencies: { pair: ['why'] },
        });
        expect(validate({ pair: ['a', 1], why: 'w' })).toBe(true);
        expect(validate({ pair: ['a', 'b'], why: 'w' })).toBe(false);
        expect(validate({ pair: ['a'] })).toBe(false);
      },
    );

    it.each([
      ['prefixItems', { type: 'array', prefixItems: [{ type: 'string' }] }],
      ['unevaluatedProperties', { type: 'object', unevaluatedProperties: false }],
      ['$anchor', { type: 'object', $defs: { a: { $anchor: 'a' } }, properties: { x: { $ref: '#a' } } }],
    ])('refuses the 2020-12 keyword %s in a schema that declares draft-07', (keyword, schema) => {
      expect(() => compiler.compile({ $schema: DRAFT_07, ...schema })).toThrow(`unknown keyword: "${keyword}"`);
    });

    it('reads a schema without $schema that only draft-07 reads as draft-07, as before 2020-12 was the default', () => {
      const validate = compiler.compile({ type: 'array', items: [{ type: 'string' }], additionalItems: false });
      expect(validate(['a'])).toBe(true);
      expect(validate(['a', 'b'])).toBe(false);
    });

    it('gives the reason of 2020-12 for a schema without $schema that neither dialect reads', () => {
      expect(() => compiler.compile({ type: 'object', frobnicate: true })).toThrow(
        'strict mode: unknown keyword: "frobnicate"',
      );
    });

    it.each([
      ['draft 2019-09', 'https://json-schema.org/draft/2019-09/schema'],
      ['draft-04', 'http://json-schema.org/draft-04/schema#'],
      ['draft-07 over https', 'https://json-schema.org/draft-07/schema#'],
      ['a meta-schema of its own', 'https://example.com/my-meta'],
      ['a number', 7],
    ])('refuses %s, naming the dialects it reads', (_what, $schema) => {
      const error = (() => {
        try {
          compiler.compile({ $schema, type: 'object' });
        } catch (thrown) {
          return thrown as SchemaRejected;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(SchemaRejected);
      expect({ pointer: error?.pointer, message: error?.message }).toEqual({
        pointer: '/$schema',
        message: `$schema ${JSON.stringify($schema)} is not a dialect this service reads: use JSON Schema 2020-12 ("${DRAFT_2020}", the default when $schema is absent) or draft-07 ("${DRAFT_07}")`,
      });
    });

    it.each([
      [
        '$dynamicRef',
        { $defs: { n: { type: 'string' } }, properties: { child: { $dynamicRef: '#/$defs/n' } } },
        '/properties/child/$dynamicRef',
      ],
      [
        '$dynamicAnchor',
        { $defs: { n: { $dynamicAnchor: 'n', type: 'string' } }, properties: { a: { $ref: '#n' } } },
        '/$defs/n/$dynamicAnchor',
      ],
      ['$recursiveRef', { properties: { a: { $recursiveRef: '#' } } }, '/properties/a/$recursiveRef'],
    ])('refuses %s, whose target the cost bound cannot follow', (keyword, schema, pointer) => {
      expect(() => compiler.compile({ $schema: DRAFT_2020, type: 'object', ...schema })).toThrow(
        new SchemaRejected(
          `${keyword} at ${pointer} is refused: the schema a dynamic reference applies depends on the path the check took, which this service cannot bound; use $ref, to an $anchor or by JSON pointer (#/$defs/…)`,
        ),
      );
    });
  });

  describe('uniqueItems, checked in time linear in the items', () => {
    it.each([
      ['no items schema', { type: 'array', uniqueItems: true }],
      ['object items', { type: 'array', items: { type: 'object' }, uniqueItems: true }],
      ['items that may be arrays', { type: 'array', items: { type: ['string', 'array'] }, uniqueItems: true }],
      ['tuple items', { type: 'array', items: [{ type: 'string' }], uniqueItems: true }],
      ['an anyOf branch', { anyOf: [{ type: 'string' }, { type: 'array', uniqueItems: true }] }],
    ])('accepts %s', (_what, schema) => {
      expect(() => compiler.compile(schema as never)).not.toThrow();
    });

    it('compares items as JSON Schema does: key order does not count, array order does, and names the two equal items', () => {
      const validate = compiler.compile({ type: 'array', uniqueItems: true });
      expect(validate([{ a: 1, b: [1, 2] }, { a: 1, b: [2, 1] }, 1, '1', null, [null]])).toBe(true);
      expect(validate([{ x: 0 }, { a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 }])).toBe(false);
      expect(validate.errors).toEqual([
        expect.objectContaining({
          keyword: 'uniqueItems',
          params: { i: 1, j: 2 },
          message: 'must NOT have duplicate items (items ## 1 and 2 are identical)',
        }),
      ]);
      expect(validate([1, 1.0])).toBe(false);
    });

    it('checks 80 000 objects, where Ajv compared every pair (40 000 held the event loop for 51 s)', () => {
      const validate = compiler.compile({ type: 'array', items: { type: 'object' }, uniqueItems: true });
      const items = Array.from({ length: 80_000 }, (_, i) => ({ i }));
      expect(validate(items)).toBe(true);
      expect(validate([...items, { i: 79_999 }])).toBe(false);
      expect(validate.errors?.[0]?.params).toEqual({ i: 79_999, j: 80_000 });
    });
  });
  describe('schemas applied to one value of the params', () => {
    const limit = USER_SCHEMA_LIMITS.maxSchemasPerValue;
    const walking = { additionalProperties: { type: 'number' } };
    const refusal = (schema: unknown): SchemaRejected | undefined => {
      try {
        compiler.compile(schema as never);
        return undefined;
      } catch (error) {
        if (error instanceof SchemaRejected) return error;
        throw error;
      }
    };
    /** d0 applies d1 twice, d1 applies d2 twice, and so on: 2^depth applications of the last one. */
    const doubling = (depth: number) => ({
      definitions: Object.fromEntries([
        ...Array.from({ length: depth }, (_, index) => [
          `d${index}`,
          { allOf: [{ $ref: `#/definitions/d${index + 1}` }, { $ref: `#/definitions/d${index + 1}` }] },
        ]),
        [`d${depth}`, { type: 'object' }],
      ]),
      $ref: '#/definitions/d0',
    });

    it.each([
      [
        'allOf over the limit',
        { type: 'object', allOf: Array.from({ length: limit }, () => walking) },
        '',
        `the schema can apply ${limit + 1} schemas`,
      ],
      [
        'dependencies over the limit',
        {
          type: 'object',
          dependencies: Object.fromEntries(Array.from({ length: limit }, (_, index) => [`p${index}`, walking])),
        },
        '',
        `the schema can apply ${limit + 1} schemas`,
      ],
      [
        'anyOf in a member over the limit',
        { type: 'object', properties: { a: { anyOf: Array.from({ length: limit }, () => ({ type: 'string' })) } } },
        '/properties/a',
        `the schema at /properties/a can apply ${limit + 1} schemas`,
      ],
      // 1, 5, 13, 29, 61 … schemas from d20 up: d16 is the first over the limit.
      [
        '$refs that double at each step',
        doubling(20),
        '/definitions/d16',
        'the schema at /definitions/d16 can apply 61 schemas',
      ],
      // Twice more for each level of nesting of the params: 2^100 at the depth a body may have.
      [
        '$refs that double with each level of the params',
        { type: 'array', allOf: [{ items: { $ref: '#' } }, { items: { $ref: '#' } }] },
        '/allOf/1',
        'the schema at /allOf/1 can apply over a million schemas',
      ],
    ])('refuses %s, naming the JSON pointer', (_what, schema, pointer, start) => {
      const error = refusal(schema);
      expect({ refused: error instanceof SchemaRejected, pointer: error?.pointer }).toEqual({ refused: true, pointer });
      expect(error!.message).toMatch(
        new RegExp(
          `^${start.replace(/[$/]/g, '\\$&')} to one value of the params .*, each walking the value again: at most ${limit}$`,
        ),
      );
    });

    it.each([
      [
        'dependentSchemas over the limit',
        {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          dependentSchemas: Object.fromEntries(Array.from({ length: limit }, (_, index) => [`p${index}`, walking])),
        },
        '',
        limit + 1,
      ],
      // Each unevaluatedProperties walks the object's members once more: 1 + 16 × 2.
      [
        'unevaluatedProperties in 16 schemas of one value',
        {
          type: 'object',
          allOf: Array.from({ length: limit / 2 }, () => ({ unevaluatedProperties: { type: 'number' } })),
        },
        '',
        limit + 1,
      ],
      [
        'an anyOf in a prefixItems item',
        {
          type: 'array',
          prefixItems: [{ type: 'string' }, { anyOf: Array.from({ length: limit }, () => ({ type: 'string' })) }],
        },
        '/prefixItems/1',
        limit + 1,
      ],
      [
        'unevaluatedItems and contains adding up on one item',
        {
          type: 'array',
          contains: { allOf: Array.from({ length: limit / 2 }, () => ({ type: 'string' })) },
          unevaluatedItems: { allOf: Array.from({ length: limit / 2 }, () => ({ type: 'string' })) },
        },
        '',
        limit + 2,
      ],
      [
        '$refs to an $anchor that double at each step',
        {
          $defs: Object.fromEntries([
            ...Array.from({ length: 6 }, (_, index) => [
              `d${index}`,
              { $anchor: `d${index}`, allOf: [{ $ref: `#d${index + 1}` }, { $ref: `#d${index + 1}` }] },
            ]),
            ['d6', { $anchor: 'd6', type: 'object' }],
          ]),
          $ref: '#d0',
        },
        '/$defs/d2',
        61,
      ],
    ])('refuses, in 2020-12, %s', (_what, schema, pointer, count) => {
      const error = refusal(schema);
      expect({ refused: error instanceof SchemaRejected, pointer: error?.pointer }).toEqual({ refused: true, pointer });
      expect(error!.message).toMatch(
        new RegExp(
          `can apply ${count} schemas to one value of the params .*, each walking the value again: at most ${limit}$`,
        ),
      );
    });

    it('refuses a loop of $ref to an $anchor on one value', () => {
      const error = refusal({
        $defs: { a: { $anchor: 'a', anyOf: [{ type: 'string' }, { $ref: '#a' }] } },
        $ref: '#a',
      });
      expect(error?.pointer).toBe('/$defs/a/anyOf/1/$ref');
      expect(error?.message).toMatch(/is part of a loop of \$ref/);
    });

    it.each([
      ['to itself', { anyOf: [{ type: 'string' }, { $ref: '#' }] }, '/anyOf/1/$ref'],
      [
        'through another definition',
        {
          definitions: {
            a: { anyOf: [{ type: 'string' }, { $ref: '#/definitions/b' }] },
            b: { not: { $ref: '#/definitions/a' } },
          },
          $ref: '#/definitions/a',
        },
        '/definitions/b/not/$ref',
      ],
    ])('refuses a loop of $ref on one value %s, on which Ajv overflows the stack', (_what, schema, pointer) => {
      const error = refusal(schema);
      expect({ refused: error instanceof SchemaRejected, pointer: error?.pointer, message: error?.message }).toEqual({
        refused: true,
        pointer,
        message: `$ref at ${pointer} is part of a loop of $ref that never goes into a member or an item of the params: Ajv would recurse on one value until the stack overflows`,
      });
    });

    it('accepts schemas that stay within the limit, and checks params with them as before', () => {
      const union = Array.from(
        { length: Math.floor((limit - 1) / 2) },
        (_, index) =>
          [`V${index}`, { type: 'object', properties: { kind: { const: `k${index}` } }, required: ['kind'] }] as const,
      );
      const schema = {
        type: 'object',
        $defs: Object.fromEntries(union),
        definitions: {
          node: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              children: { type: 'array', items: { $ref: '#/definitions/node' } },
            },
          },
          named: { $id: '#named', type: 'string' },
          // Any JSON: one branch per kind of value, and only one of them goes deeper.
          json: {
            anyOf: [
              { type: ['string', 'number', 'boolean', 'null'] },
              { type: 'array', items: { $ref: '#/definitions/json' } },
              { type: 'object', additionalProperties: { $ref: '#/definitions/json' } },
            ],
          },
          unused: { allOf: Array.from({ length: limit * 2 }, () => walking) },
        },
        properties: {
          // A union as pydantic writes it: each variant a $ref, so 1 + 2 × 15 schemas on one value.
          shape: { oneOf: union.map(([name]) => ({ $ref: `#/$defs/${name}` })) },
          tree: { $ref: '#/definitions/node' },
          label: { anyOf: [{ $ref: '#named' }, { type: 'null' }] },
          data: { $ref: '#/definitions/json' },
          most: { allOf: Array.from({ length: limit - 1 }, () => walking) },
        },
      };
      const validate = compiler.compile(schema);
      expect(
        validate({
          shape: { kind: 'k3' },
          tree: { name: 'a', children: [{ name: 'b', children: [] }] },
          label: null,
          most: { x: 1 },
        }),
      ).toBe(true);
      expect(validate({ tree: { children: [{ name: 1 }] } })).toBe(false);
      expect(validate({ shape: { kind: 'k99' } })).toBe(false);
      expect(validate({ label: 7 })).toBe(false);
      expect(validate({ data: { a: [1, { b: [null, 'c'] }] } })).toBe(true);
    });
  });
});
