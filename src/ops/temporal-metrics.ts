import { freePort } from '../util/ports';

/** How long GET /metrics waits for the Temporal SDK's exporter before answering without its metrics. */
const SCRAPE_TIMEOUT_MS = 2_000;

/**
 * The Temporal SDK's own metrics (its Rust core: workflow and activity task slots, schedule-to-start
 * latency, sticky cache, polls), which it serves from a Prometheus exporter of its own on loopback.
 * GET /metrics appends them to the service's, so one scrape of a process sees both.
 */
export class TemporalMetrics {
  private constructor(readonly bindAddress: string) {}

  /**
   * On `port`, or for 0 a loopback port free now: the SDK binds its exporter itself and reports no
   * port back, so 0 cannot be handed to it. Were the port taken in between, the SDK logs that it
   * could not bind, and only its metrics are missing.
   */
  static async onPort(port: number): Promise<TemporalMetrics> {
    return new TemporalMetrics(`127.0.0.1:${port === 0 ? await freePort() : port}`);
  }

  /** The exporter's text, or a comment saying why it is missing: the service's own metrics are served either way. */
  async text(): Promise<string> {
    try {
      const response = await fetch(`http://${this.bindAddress}/metrics`, {
        signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS),
      });
      if (!response.ok) return `# Temporal SDK metrics unavailable: ${this.bindAddress} answered ${response.status}\n`;
      return await response.text();
    } catch (error) {
      return `# Temporal SDK metrics unavailable: ${(error as Error).message}\n`;
    }
  }
}
