import type { LimitReporter } from './limit-reporter';

/**
 * How many of something one key (a principal, an address) holds open at once. An open thing frees
 * its place only when it closes, at a time nobody can tell, so a refusal suggests a short wait.
 */
export class ConcurrencyCap {
  private readonly open = new Map<string, number>();

  constructor(
    /** The cap's name in logs and metrics. */
    private readonly name: string,
    /** 0 turns the cap off. */
    readonly max: number,
    private readonly reporter: LimitReporter,
  ) {}

  /** Whether `key` holds its most; a full key is reported. */
  isFull(key: string): boolean {
    const full = this.max > 0 && (this.open.get(key) ?? 0) >= this.max;
    if (full) this.reporter.refused(this.name, key);
    return full;
  }

  /** Takes a place for `key`; the returned function gives it back, once however often it is called. */
  hold(key: string): () => void {
    if (this.max === 0) return () => undefined;
    this.open.set(key, (this.open.get(key) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = (this.open.get(key) ?? 1) - 1;
      if (left === 0) this.open.delete(key);
      else this.open.set(key, left);
    };
  }
}

/** The Retry-After of a refusal by a cap: a guess, since a place frees when someone else closes. */
export const CAP_RETRY_AFTER_MS = 5_000;
