/** The index of the first of `sorted` (in id order) whose id sorts after `after`, by binary search; 0 without `after`. */
export function firstAfter(sorted: ReadonlyArray<{ id: string }>, after: string | undefined): number {
  if (after === undefined) return 0;
  let [low, high] = [0, sorted.length];
  while (low < high) {
    const middle = (low + high) >> 1;
    if (sorted[middle].id <= after) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Orders by id as MongoDB orders strings (by code unit, not by locale). */
export const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
