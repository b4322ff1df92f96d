import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The Prometheus registry served at GET /metrics; parts add their own counters to it. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const httpRequests = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const counter = (name: string, help: string, labelNames: readonly string[] = []) =>
    new Counter({ name, help, labelNames, registers: [registry] });
  return { registry, httpRequests, counter };
}

export type Metrics = ReturnType<typeof createMetrics>;
