import { canonicalJson } from './canonical-json';

/** The definition the stored hashes were made with: each object copied with its entries sorted. */
const reference = (value: unknown): string =>
  JSON.stringify(value, (_key, member: unknown) =>
    typeof member === 'object' && member !== null && !Array.isArray(member)
      ? Object.fromEntries(Object.entries(member).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : member,
  );

describe('canonicalJson', () => {
  it.each([
    ['keys out of order', { b: 1, a: { d: [{ z: 1, y: 2 }], c: null } }],
    ['keys in order', { a: 1, b: [1, 2, { c: 'd' }] }],
    ['integer-like keys, which objects order first', { b: 1, '10': 1, '9': 2, a: 1 }],
    ['a member named __proto__', JSON.parse('{"b":1,"__proto__":{"x":1}}')],
    ['values JSON leaves out or nulls', { b: undefined, a: [undefined, Number.NaN, -0, 1e21], c: new Date(0) }],
    ['non-ASCII keys', { ä: 1, Z: 2, '': 3, é: { b: 1, a: 2 } }],
    ['scalars', [3, 'text', null, true]],
  ])('writes %s as the reference does', (_what, value) => {
    expect(canonicalJson(value)).toBe(reference(value));
  });

  it('writes the same text for the same value with its keys in any order', () => {
    expect(canonicalJson({ a: 1, b: { c: 2, d: 3 } })).toBe(canonicalJson({ b: { d: 3, c: 2 }, a: 1 }));
  });
});
