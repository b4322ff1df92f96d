import type { ChangeLog } from '../../src/store/change-log';

/**
 * A change log in memory, for unit tests of what a LiveCopy keeps: `changedIds[seq - 1]` is the id
 * changed at seq, undefined for a number handed out and not recorded; `reads.counter` counts the
 * reads of its last number.
 */
export function memoryChangeLog() {
  const changedIds: Array<string | undefined> = [];
  const reads = { counter: 0 };
  const log = {
    lastSeq: async () => {
      reads.counter += 1;
      return changedIds.length;
    },
    read: async (from: number, through: number) => changedIds.slice(from - 1, through),
  } as unknown as ChangeLog;
  return { log, changedIds, reads };
}
