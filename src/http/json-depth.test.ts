import { jsonTextNestsDeeperThan, nestsDeeperThan } from './json-depth';

describe('jsonTextNestsDeeperThan', () => {
  it.each([
    ['{}', 1],
    ['[]', 0],
    ['{"a":[1,{"b":[]}]}', 3],
    ['{"a":[1,{"b":[]}]}', 4],
    ['[[[["x"]]]]', 3],
    ['[[[["x"]]]]', 4],
    ['{"a":"[[[[[[","b":"\\\\"}', 1],
    ['{"a":"\\"[[[[","b":[]}', 1],
    ['{"a":"\\"[[[[","b":[]}', 2],
    ['"[[[["', 0],
    ['3', 0],
  ])('agrees with nestsDeeperThan on the parsed value of %s, at %d', (text, limit) => {
    expect(jsonTextNestsDeeperThan(text, limit)).toBe(nestsDeeperThan(JSON.parse(text), limit));
  });

  it('reads a megabyte of small objects without walking them', () => {
    const text = JSON.stringify({ a: Array.from({ length: 100_000 }, () => ({ y: [1] })) });
    expect(jsonTextNestsDeeperThan(text, 4)).toBe(false);
    expect(jsonTextNestsDeeperThan(text, 3)).toBe(true);
  });
});
