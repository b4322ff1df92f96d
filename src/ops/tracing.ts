import type { resources, tracing } from '@opentelemetry/sdk-node';

/** What the Temporal worker needs to export its workflows' spans with the process's own. */
export interface Tracing {
  spanProcessor: tracing.SpanProcessor;
  resource: resources.Resource;
  /** Sends the spans still held, then stops. */
  shutdown(): Promise<void>;
}

let active: Tracing | undefined;

/** The process's tracing, when OTEL_EXPORTER_OTLP_ENDPOINT turned it on (src/ops/start-tracing.ts). */
export const activeTracing = (): Tracing | undefined => active;

export function setActiveTracing(tracing: Tracing): void {
  active = tracing;
}
