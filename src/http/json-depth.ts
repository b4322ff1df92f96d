/**
 * How deep arrays and objects may nest in JSON the service accepts from outside (request bodies,
 * room frames, agents' replies). Far beyond any real params or result, and far below the ~4000
 * levels at which JSON.stringify, which every stored task and report goes through, overflows the stack.
 */
export const MAX_JSON_DEPTH = 100;

/** Iterative, and stops at the first path deeper than `limit`. */
export function nestsDeeperThan(root: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[root, 1]];
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(value)) pending.push([child, depth + 1]);
  }
  return false;
}
