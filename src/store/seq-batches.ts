/** Reserves `count` consecutive seqs of a key's counter in one write and returns the first. */
export type ReserveSeqs = (key: string, count: number) => Promise<number>;

interface Waiting {
  take: (seq: number) => void;
  fail: (error: unknown) => void;
}

/**
 * Hands out the seqs of many counters, one write at a time per counter: those asked for while a
 * counter's write is under way are reserved together by its next one, which moves it by as many
 * (`$inc: k`). A burst of k callers then costs the store one write rather than k taken in turn,
 * and each caller gets its own seq, dense and in the order it asked in. One write per counter in
 * flight also keeps this process's `$inc`s from racing where a store's update is not atomic
 * (src/store/mongo.ts).
 */
export class SeqBatches {
  private readonly waiting = new Map<string, Waiting[]>();

  constructor(private readonly reserve: ReserveSeqs) {}

  next(key: string): Promise<number> {
    return new Promise<number>((take, fail) => {
      const queue = this.waiting.get(key);
      if (queue) queue.push({ take, fail });
      else {
        this.waiting.set(key, [{ take, fail }]);
        void this.reserveWaiting(key);
      }
    });
  }

  /** Serves the key's waiting callers, batch after batch, then forgets the key. */
  private async reserveWaiting(key: string): Promise<void> {
    const queue = this.waiting.get(key)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, queue.length);
      try {
        const first = await this.reserve(key, batch.length);
        batch.forEach(({ take }, index) => take(first + index));
      } catch (error) {
        for (const { fail } of batch) fail(error);
      }
    }
    this.waiting.delete(key);
  }
}
