// How a map's items are cut into chunks and run in lanes. A chunk is one child workflow running a
// slice of the items (map-chunk-workflow.ts); a lane runs one chunk at a time and takes the next
// unstarted one when its chunk ends, so a slow item holds up only its own lane. Pure functions.

/** Items `from` to `to` of the map, both included. */
export interface MapChunk {
  from: number;
  to: number;
}

/** A map's chunks in element order, and each lane's share of its maxConcurrency (they sum to it). */
export interface MapLayout {
  chunks: MapChunk[];
  shares: number[];
}

/** Fewer items per chunk than this cost more workflows than they save waiting. */
export const MIN_ITEMS_PER_CHUNK = 8;

/**
 * About four chunks per unit of concurrency, so lanes that finish early find work left, within
 * MIN_ITEMS_PER_CHUNK and `maxItemsPerChunk` (what one chunk's history holds).
 */
export function itemsPerChunk(total: number, maxConcurrency: number, maxItemsPerChunk: number): number {
  return Math.min(maxItemsPerChunk, Math.max(MIN_ITEMS_PER_CHUNK, Math.ceil(total / (4 * maxConcurrency))));
}

/** The layout of a map of `total` items (at least one) with at most `maxConcurrency` running at once. */
export function planMap(total: number, maxConcurrency: number, maxItemsPerChunk: number): MapLayout {
  const size = itemsPerChunk(total, maxConcurrency, maxItemsPerChunk);
  const chunks: MapChunk[] = [];
  for (let from = 0; from < total; from += size) chunks.push({ from, to: Math.min(from + size, total) - 1 });
  const lanes = Math.min(maxConcurrency, chunks.length);
  const shares = Array.from(
    { length: lanes },
    (_, lane) => Math.floor(maxConcurrency / lanes) + (lane < maxConcurrency % lanes ? 1 : 0),
  );
  return { chunks, shares };
}
