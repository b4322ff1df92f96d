import type { MapCounts } from '../../workflows/map-contract';
import type { SliceDocument } from './map-slices';

/** The largest map result kept: the task record holds it, within MongoDB's 16 MiB per document. */
export const MAX_MAP_RESULT_BYTES = 8 * 1024 * 1024;

/**
 * The map's result as JSON text, `{"results": [...], "errors": [...]}`, joined from its slices in
 * order without parsing them; `errors` only when an item failed or was cancelled.
 */
export function joinedResult(slices: SliceDocument[]): string {
  const results = slices.map((slice) => slice.results).join(',');
  const errors = slices
    .map((slice) => slice.errors.slice(1, -1))
    .filter((part) => part.length > 0)
    .join(',');
  return `{"results":[${results}]${errors.length > 0 ? `,"errors":[${errors}]` : ''}}`;
}

/** The map's progress and message, as its task shows them: "420 of 1000 items ended (3 failed)". */
export function progressOf({ total, completed, failed, cancelled }: MapCounts): { progress: number; message: string } {
  const ended = completed + failed + cancelled;
  const notes = [...(failed > 0 ? [`${failed} failed`] : []), ...(cancelled > 0 ? [`${cancelled} cancelled`] : [])];
  return {
    progress: total === 0 ? 1 : ended / total,
    message: `${ended} of ${total} items ended${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`,
  };
}
