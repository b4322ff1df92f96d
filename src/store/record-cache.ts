/** What one cache of a process keeps at most, counted as JSON text (src/store/record-cache.ts). */
export const RECORD_CACHE_BYTES = 64 * 1024 * 1024;
/** A record larger than this share of the budget is read each time rather than evict many others. */
const LARGEST_SHARE = 64;

/**
 * Records read by `_id`, kept in memory up to a budget of bytes, the least recently used dropped
 * first, for the pages of an in-memory directory kept current by a LiveCopy: the directory forgets
 * a record when the change log names it, and everything when it reads itself whole. So a page costs
 * one store read per record not read since it last changed, not one per record on the page.
 */
export class RecordCache<T extends object> {
  private readonly records = new Map<string, { value: T; bytes: number }>();
  private bytes = 0;
  /** Counts forgets: a read begun before one may hold what changed since, and is not kept. */
  private forgets = 0;

  constructor(
    private readonly read: (id: string) => Promise<T | null>,
    private readonly budgetBytes = RECORD_CACHE_BYTES,
  ) {}

  /** The records of `ids` that exist, in the order of `ids`: from memory, the others read by `_id` in parallel and kept. */
  async getMany(ids: string[]): Promise<T[]> {
    const forgetsBefore = this.forgets;
    const found: Array<T | null> = await Promise.all(
      ids.map(async (id) => this.hit(id) ?? this.readAndKeep(id, forgetsBefore)),
    );
    return found.filter((record): record is T => record !== null);
  }

  /** Drops the record of `id`: it changed. */
  forget(id: string): void {
    this.forgets += 1;
    this.drop(id);
  }

  clear(): void {
    this.forgets += 1;
    this.records.clear();
    this.bytes = 0;
  }

  /** The record, now the most recently used. */
  private hit(id: string): T | undefined {
    const kept = this.records.get(id);
    if (!kept) return undefined;
    this.records.delete(id);
    this.records.set(id, kept);
    return kept.value;
  }

  private async readAndKeep(id: string, forgetsBefore: number): Promise<T | null> {
    const value = await this.read(id);
    if (value !== null && this.forgets === forgetsBefore) this.keep(id, value);
    return value;
  }

  /** Keeps `value` as the record of `id`, as if read: one its writer just stored. */
  keep(id: string, value: T): void {
    const bytes = JSON.stringify(value).length;
    if (bytes > this.budgetBytes / LARGEST_SHARE) return;
    this.drop(id);
    this.records.set(id, { value, bytes });
    this.bytes += bytes;
    for (const oldest of this.records.keys()) {
      if (this.bytes <= this.budgetBytes) break;
      this.drop(oldest);
    }
  }

  private drop(id: string): void {
    const kept = this.records.get(id);
    if (!kept) return;
    this.records.delete(id);
    this.bytes -= kept.bytes;
  }
}
