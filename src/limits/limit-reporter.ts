import type { Logger } from '../ops/logger';
import type { Metrics } from '../ops/metrics';

/**
 * Tells the operator that a principal or an address hit a limit: a warning at most once per key
 * and window, so that a flood of refusals does not become a flood of log lines, and a count of
 * every refusal in `rate_limited_total`.
 */
export class LimitReporter {
  private readonly quietUntil = new Map<string, number>();
  /** Keys whose quiet time is over are forgotten once a window, so the map holds about two windows' worth. */
  private nextSweep = 0;
  private readonly refusals;

  constructor(
    private readonly logger: Logger,
    metrics: Metrics,
    private readonly windowMs: number,
  ) {
    this.refusals = metrics.rateLimited;
  }

  refused(limit: string, key: string): void {
    this.refusals.inc({ limit });
    const now = Date.now();
    const id = `${limit} ${key}`;
    if ((this.quietUntil.get(id) ?? 0) > now) return;
    if (now >= this.nextSweep) this.forgetQuietOnes(now);
    this.quietUntil.set(id, now + this.windowMs);
    this.logger.warn(
      { limit, key },
      `limit ${limit} reached by ${key}; further refusals are counted in rate_limited_total, not logged, for ${this.windowMs} ms`,
    );
  }

  private forgetQuietOnes(now: number): void {
    this.nextSweep = now + this.windowMs;
    for (const [id, until] of this.quietUntil) if (until <= now) this.quietUntil.delete(id);
  }
}
