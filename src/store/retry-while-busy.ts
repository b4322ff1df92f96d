import { MongoBulkWriteError } from 'mongodb';
import { isDuplicateKey, isStoreBusy } from './mongo';

const BUSY_RETRIES = 5;

/**
 * A few short retries while the store is busy (isStoreBusy) turn a refused concurrent write into a
 * slower answer rather than a failed request. A partly written (unordered) insert is completed by
 * the retry, whose only complaint is then the documents the first try wrote: with
 * `duplicatesOnRetryAreOurs` that complaint is success.
 */
export async function retryWhileBusy<T>(
  write: () => Promise<T>,
  { duplicatesOnRetryAreOurs }: { duplicatesOnRetryAreOurs: boolean },
): Promise<T | void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await write();
    } catch (error) {
      if (duplicatesOnRetryAreOurs && attempt > 1 && onlyDuplicateKeys(error)) return;
      if (attempt >= BUSY_RETRIES || !isStoreBusy(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
    }
  }
}

/** True when every document a write refused was refused as a duplicate key. */
export function onlyDuplicateKeys(error: unknown): boolean {
  if (error instanceof MongoBulkWriteError) {
    const writeErrors = [error.writeErrors].flat();
    return writeErrors.length > 0 && writeErrors.every((writeError) => writeError.code === 11000);
  }
  return isDuplicateKey(error);
}
