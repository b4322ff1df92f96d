import { typeNames } from './json-types';
import {
  atPointer,
  declaresMember,
  memberOf,
  pointerOf,
  shapeOfSchema,
  typesOf,
  type MemberShape,
} from './schema-paths';

/** What a read at `pointer` of `schema` finds: the types and where, or why nothing is there. */
function read(schema: Record<string, unknown>, pointer: string) {
  return found(atPointer(shapeOfSchema(schema), pointer));
}

function found(member: MemberShape) {
  if (member.kind === 'absent') return { absent: member.pointer, why: member.why };
  return { types: typeNames(typesOf(member)), at: pointerOf(member, () => true) };
}

const EVERY_TYPE = ['null', 'boolean', 'object', 'array', 'string', 'number'];

describe('schema paths', () => {
  const order = {
    type: 'object',
    properties: {
      id: { type: 'integer' },
      customer: {
        type: 'object',
        properties: { name: { type: 'string' }, 'a/b': { type: 'boolean' } },
        additionalProperties: false,
      },
      lines: { type: 'array', items: { type: 'object', properties: { price: { type: 'number' } } } },
      pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], items: false },
      legacy: { type: 'array', items: [{ type: 'null' }], additionalItems: { type: 'boolean' } },
      score: { type: ['number', 'null'] },
    },
  };

  it.each([
    ['a member', '/id', { types: ['integer'], at: '/properties/id' }],
    ['a nested member', '/customer/name', { types: ['string'], at: '/properties/customer/properties/name' }],
    [
      'a member with an escaped name',
      '/customer/a~1b',
      { types: ['boolean'], at: '/properties/customer/properties/a~1b' },
    ],
    ['an item of a list', '/lines/3/price', { types: ['number'], at: '/properties/lines/items/properties/price' }],
    ['an item by position (prefixItems)', '/pair/1', { types: ['integer'], at: '/properties/pair/prefixItems/1' }],
    ["draft-07's list items", '/legacy/0', { types: ['null'], at: '/properties/legacy/items/0' }],
    ["draft-07's additionalItems", '/legacy/5', { types: ['boolean'], at: '/properties/legacy/additionalItems' }],
    ['a list of types', '/score', { types: ['null', 'number'], at: '/properties/score' }],
    ['a member no schema describes (open object)', '/other', { types: EVERY_TYPE, at: '' }],
    ['a member of an item no schema describes', '/lines/0/sku', { types: EVERY_TYPE, at: '' }],
  ])('reads %s', (_what, pointer, expected) => {
    expect(read(order, pointer)).toEqual(expected);
  });

  it.each([
    [
      'a member additionalProperties excludes',
      '/customer/email',
      '/properties/customer',
      /"email" is not among its properties, and additionalProperties is false/,
    ],
    [
      'a member of a string',
      '/customer/name/first',
      '/properties/customer/properties/name',
      /its type is string, not an object/,
    ],
    ['an item of a number', '/id/0', '/properties/id', /not an object or an array/],
    ['an item past the prefix where items is false', '/pair/2', '/properties/pair/items', /no value/],
  ])('finds nothing at %s', (_what, pointer, at, why) => {
    expect(read(order, pointer)).toEqual({ absent: at, why: expect.stringMatching(why) });
  });

  it('follows $ref within the document, by pointer, to the root and to an anchor', () => {
    const schema = {
      type: 'object',
      properties: {
        byPointer: { $ref: '#/$defs/point' },
        byAnchor: { $ref: '#here' },
        self: { $ref: '#' },
      },
      additionalProperties: false,
      $defs: {
        point: { type: 'object', properties: { x: { type: 'integer' } }, additionalProperties: false },
        anchored: { $anchor: 'here', type: 'string' },
      },
    };
    expect(read(schema, '/byPointer/x')).toEqual({ types: ['integer'], at: '/$defs/point/properties/x' });
    expect(read(schema, '/byPointer/y')).toMatchObject({ absent: '/$defs/point' });
    expect(read(schema, '/byAnchor')).toEqual({ types: ['string'], at: '/properties/byAnchor' });
    expect(read(schema, '/self/self/byPointer/x')).toMatchObject({ types: ['integer'] });
    expect(read(schema, '/self/nothing')).toMatchObject({ absent: '' });
  });

  it('takes a $ref it cannot resolve, or one under a nested $id, as telling nothing', () => {
    expect(read({ properties: { a: { $ref: 'https://example.com/x.json' } } }, '/a/b')).toMatchObject({
      types: EVERY_TYPE,
    });
    const nestedId = {
      properties: { a: { $id: 'https://example.com/a.json', $ref: '#/$defs/n', $defs: { n: { type: 'integer' } } } },
      $defs: { n: { type: 'string' } },
    };
    expect(read(nestedId, '/a')).toMatchObject({ types: EVERY_TYPE });
  });

  it('takes a $ref loop, or a chain that doubles at each step, as telling nothing once its visits are spent', () => {
    expect(read({ $ref: '#' }, '/a/b')).toEqual({ types: EVERY_TYPE, at: '' });
    const doubling: Record<string, unknown> = { $defs: { d40: { type: 'string' } }, $ref: '#/$defs/d0' };
    for (let level = 0; level < 40; level += 1)
      (doubling.$defs as Record<string, unknown>)[`d${level}`] = {
        anyOf: [{ $ref: `#/$defs/d${level + 1}` }, { $ref: `#/$defs/d${level + 1}` }],
      };
    expect(read(doubling, '/a')).toMatchObject({ types: EVERY_TYPE });
    expect(typeNames(typesOf(shapeOfSchema(doubling)))).toEqual(EVERY_TYPE);
  });

  it('finds a member that exists in some branch of anyOf or oneOf, with the types of all such branches', () => {
    const schema = {
      anyOf: [
        { type: 'object', properties: { hit: { type: 'integer' } }, additionalProperties: false },
        { type: 'object', properties: { hit: { type: 'string' } }, additionalProperties: false },
        { type: 'object', properties: { miss: { type: 'string' } }, additionalProperties: false },
      ],
    };
    expect(read(schema, '/hit')).toEqual({ types: ['string', 'integer'], at: '/anyOf/0/properties/hit' });
    expect(read(schema, '/miss')).toEqual({ types: ['string'], at: '/anyOf/2/properties/miss' });
    expect(read(schema, '/none')).toEqual({ absent: '/anyOf', why: 'no schema of anyOf has a member "none"' });
    expect(read({ oneOf: [{ type: 'string' }, { type: 'object' }] }, '/any')).toMatchObject({ types: EVERY_TYPE });
  });

  it('holds a member to every schema of allOf: one that excludes it excludes it', () => {
    const schema = {
      allOf: [
        { type: 'object', properties: { n: { type: ['integer', 'string'] } } },
        { properties: { n: { type: ['integer', 'null'] } }, additionalProperties: false },
      ],
    };
    expect(read(schema, '/n')).toEqual({ types: ['integer'], at: '/allOf/0/properties/n' });
    expect(read(schema, '/m')).toMatchObject({ absent: '/allOf/1' });
  });

  it('reads patternProperties with RE2, before additionalProperties', () => {
    const schema = {
      type: 'object',
      patternProperties: { '^x-': { type: 'string' } },
      additionalProperties: { type: 'boolean' },
    };
    expect(read(schema, '/x-trace')).toEqual({ types: ['string'], at: '/patternProperties/^x-' });
    expect(read(schema, '/flag')).toEqual({ types: ['boolean'], at: '/additionalProperties' });
  });

  it('takes the types of const and enum, and of a false schema none', () => {
    const schema = { properties: { c: { const: 2 }, e: { enum: ['a', 1.5] }, f: false } };
    expect(read(schema, '/c')).toMatchObject({ types: ['integer'] });
    expect(read(schema, '/e')).toMatchObject({ types: ['string', 'number'] });
    expect(read(schema, '/f')).toMatchObject({ absent: '/properties/f' });
  });

  it('says which schemas declare a member by name', () => {
    const shape = shapeOfSchema({ allOf: [{ properties: { '/a': {} } }] });
    expect(declaresMember(shape, '/a')).toBe(true);
    expect(declaresMember(shape, '/b')).toBe(false);
    expect(memberOf(shape, '/a')).toMatchObject({ kind: 'schema' });
  });
});
