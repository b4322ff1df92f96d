/**
 * JSON with every object's keys sorted, so that the same value sent again with its keys in another
 * order compares equal: a repeated report, a repeated request under an Idempotency-Key. Stored
 * hashes depend on the text: it is JSON.stringify's of each object rebuilt with its keys in sorted
 * order. An object whose keys are in order already is written as it is, which halves the time a
 * megabyte of small objects holds the event loop (docs/benchmarks.md, "Event loop during one
 * request").
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) => {
    if (typeof member !== 'object' || member === null || Array.isArray(member)) return member;
    const keys = Object.keys(member);
    if (inOrder(keys)) return member;
    // No prototype: a member named `__proto__` stays a member.
    const sorted = Object.create(null) as Record<string, unknown>;
    for (const key of keys.sort()) sorted[key] = (member as Record<string, unknown>)[key];
    return sorted;
  });
}

function inOrder(keys: string[]): boolean {
  for (let index = 1; index < keys.length; index += 1) if (keys[index - 1] > keys[index]) return false;
  return true;
}
