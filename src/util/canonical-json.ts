/**
 * JSON with every object's keys sorted, so that the same value sent again with its keys in another
 * order compares equal: a repeated report, a repeated request under an Idempotency-Key.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) =>
    typeof member === 'object' && member !== null && !Array.isArray(member)
      ? Object.fromEntries(Object.entries(member).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : member,
  );
}
