/**
 * Runs the calls given for one key one after another, and calls for different keys freely. For
 * writes that read-modify-write one document: where a store's update is not atomic
 * (src/store/mongo.ts), two of them in one process would otherwise race, and the second would
 * undo the first.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, call: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(call, call);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    // The last call of a key removes it, so keys seen once do not pile up.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
