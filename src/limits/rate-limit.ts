import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { rateLimited } from '../http/errors';
import type { LimitReporter } from './limit-reporter';

export interface RateLimitOptions {
  /** The limit's name in logs and metrics. */
  name: string;
  /** Events per key and window; 0 turns the limit off. */
  points: number;
  windowMs: number;
  /** How long a key that went over stays refused; 0: until its window ends. */
  blockMs?: number;
  /** What a refused caller is told, before when to try again. */
  message: string;
}

/**
 * A count of events per key (a principal, an address) over a fixed window, kept in this process's
 * memory: a read-modify-write is not atomic on every MongoDB-compatible store (src/store/mongo.ts,
 * docs/embedded-stack.md), so a count kept in the store would let concurrent requests past it.
 */
export class RateLimit {
  private readonly limiter?: RateLimiterMemory;

  constructor(
    private readonly options: RateLimitOptions,
    private readonly reporter: LimitReporter,
  ) {
    if (options.points > 0) {
      this.limiter = new RateLimiterMemory({
        points: options.points,
        duration: options.windowMs / 1000,
        blockDuration: (options.blockMs ?? 0) / 1000,
      });
    }
  }

  /** Counts one event for `key`; 429 when the key is over its limit. */
  async consume(key: string): Promise<void> {
    const outcome = await this.count(key);
    if (outcome) throw this.refusal(key, outcome.msBeforeNext);
  }

  /** Counts one event for `key` without refusing this one: the next check refuses. */
  async record(key: string): Promise<void> {
    const outcome = await this.count(key);
    if (outcome) this.reporter.refused(this.options.name, key);
  }

  /** 429 when `key` is over its limit (or blocked), without counting anything. */
  async check(key: string): Promise<void> {
    const state = await this.limiter?.get(key);
    if (state && state.consumedPoints > this.options.points) throw this.refusal(key, state.msBeforeNext);
  }

  /** undefined while under the limit; the limiter's answer once over it. */
  private async count(key: string): Promise<RateLimiterRes | undefined> {
    if (!this.limiter) return undefined;
    try {
      await this.limiter.consume(key);
      return undefined;
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes) return outcome;
      throw outcome;
    }
  }

  private refusal(key: string, retryAfterMs: number) {
    this.reporter.refused(this.options.name, key);
    return rateLimited(`${this.options.message}; try again after the time in Retry-After`, retryAfterMs);
  }
}
