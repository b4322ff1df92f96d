import { randomUUID } from 'node:crypto';
import type { Store } from './mongo';

/** One document per kind of data, `{_id: kind, value}`: a new value after every change of that data, in any process. */
export const CHANGE_STAMPS_COLLECTION = 'change_stamps';

/**
 * Tells the processes that keep a copy of some data in memory that it changed: a writer bumps the
 * stamp after its write, a reader compares it (one read by `_id`, cheap on FerretDB too) with the
 * one its copy was read under.
 */
export class ChangeStamp {
  constructor(
    private readonly store: Store,
    private readonly kind: string,
  ) {}

  private get stamps() {
    return this.store.collection<{ _id: string; value: string }>(CHANGE_STAMPS_COLLECTION);
  }

  /**
   * A new value. A stamp that could not be written delays the change in the copies until they are
   * read again for their age (StampedCopy); the change itself is stored, so it does not fail for it.
   */
  async bump(): Promise<void> {
    await this.stamps.updateOne({ _id: this.kind }, { $set: { value: randomUUID() } }, { upsert: true }).catch(() => undefined);
  }

  async read(): Promise<string | undefined> {
    return (await this.stamps.findOne({ _id: this.kind }))?.value;
  }
}

/**
 * An in-memory copy of data read whole, read again when its ChangeStamp differs from the one it was
 * read under, or when older than `maxAgeMs` (a process that died between a write and its bump).
 * Concurrent requests share one read. The stamp is read before the data, so a change bumped after
 * that makes the next request read again: every process shows a change from the next request on.
 */
export class StampedCopy<T> {
  private copy?: { stamp: string | undefined; readAt: number; value: T };
  private reading?: { stamp: string | undefined; value: Promise<T> };

  constructor(
    private readonly stamp: ChangeStamp,
    private readonly read: () => Promise<T>,
    private readonly maxAgeMs: number,
  ) {}

  async current(): Promise<T> {
    const stamp = await this.stamp.read();
    const copy = this.copy;
    if (copy && copy.stamp === stamp && Date.now() - copy.readAt < this.maxAgeMs) return copy.value;
    if (this.reading && this.reading.stamp === stamp) return this.reading.value;
    const readAt = Date.now();
    const reading = { stamp, value: this.read() };
    this.reading = reading;
    try {
      const value = await reading.value;
      this.copy = { stamp, readAt, value };
      return value;
    } finally {
      if (this.reading === reading) this.reading = undefined;
    }
  }
}
