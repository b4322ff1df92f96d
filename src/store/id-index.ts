/**
 * Entries kept in id order, as MongoDB orders strings (by code unit, not by locale): pages "after
 * this id" in memory, with one entry replaced or removed at a time.
 */
export class IdIndex<T extends { id: string }> {
  private readonly entries: T[] = [];

  get size(): number {
    return this.entries.length;
  }

  get(id: string): T | undefined {
    const entry = this.entries[this.firstAfter(id, true)];
    return entry?.id === id ? entry : undefined;
  }

  set(entry: T): void {
    const index = this.firstAfter(entry.id, true);
    if (this.entries[index]?.id === entry.id) this.entries[index] = entry;
    else this.entries.splice(index, 0, entry);
  }

  delete(id: string): void {
    const index = this.firstAfter(id, true);
    if (this.entries[index]?.id === id) this.entries.splice(index, 1);
  }

  /** Up to `limit` entries after the id `after`, in id order, that `accept` takes; looks at the entries one by one, in memory. */
  page(limit: number, after: string | undefined, accept: (entry: T) => boolean = () => true): T[] {
    const found: T[] = [];
    for (
      let index = after === undefined ? 0 : this.firstAfter(after, false);
      index < this.entries.length && found.length < limit;
      index += 1
    ) {
      if (accept(this.entries[index])) found.push(this.entries[index]);
    }
    return found;
  }

  /** The index of the first entry whose id is `id` or after it (`inclusive`), or after it only. */
  private firstAfter(id: string, inclusive: boolean): number {
    let [low, high] = [0, this.entries.length];
    while (low < high) {
      const middle = (low + high) >> 1;
      const before = inclusive ? this.entries[middle].id < id : this.entries[middle].id <= id;
      if (before) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/** IdIndexes by key (an agent's search tokens, a room's members): an entry sits in the index of each of its keys. */
export class KeyedIdIndex<T extends { id: string }> {
  private readonly byKey = new Map<string, IdIndex<T>>();

  get(key: string): IdIndex<T> | undefined {
    return this.byKey.get(key);
  }

  set(entry: T, keys: Iterable<string>): void {
    for (const key of keys) {
      let index = this.byKey.get(key);
      if (!index) {
        index = new IdIndex<T>();
        this.byKey.set(key, index);
      }
      index.set(entry);
    }
  }

  delete(id: string, keys: Iterable<string>): void {
    for (const key of keys) {
      const index = this.byKey.get(key);
      index?.delete(id);
      if (index?.size === 0) this.byKey.delete(key);
    }
  }
}
