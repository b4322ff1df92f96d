/**
 * A small deterministic PRNG (mulberry32) for fuzz tests: the same seed gives the same cases, so a
 * failure printed with its seed reproduces with `FUZZ_SEED=<seed>`.
 */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A generator of its own for `label`, so that the cases of one label do not shift when another label's cases change. */
  static derive(seed: number, label: string): SeededRandom {
    let hash = seed >>> 0;
    for (const char of label) hash = Math.imul(hash ^ char.charCodeAt(0), 0x9e3779b1) >>> 0;
    return new SeededRandom(hash);
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [0, below). */
  below(below: number): number {
    return Math.floor(this.next() * below);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)];
  }
}

/** The seed of this run: FUZZ_SEED when set (a failure prints it), else a fixed one so that every run tries the same cases. */
export function fuzzSeed(fallback = 20261123): number {
  const raw = process.env.FUZZ_SEED;
  if (raw === undefined || raw === '') return fallback;
  const seed = Number(raw);
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got "${raw}"`);
  return seed;
}
