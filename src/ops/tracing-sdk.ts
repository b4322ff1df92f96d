import { node, resources, tracing } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { KoaInstrumentation, KoaLayerType } from '@opentelemetry/instrumentation-koa';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';

import { setActiveTracing, type Tracing } from './tracing';

/** Polled by Prometheus and probes many times a minute: a span each would bury the traces of tasks. */
const UNTRACED_PATHS = new Set(['/metrics', '/healthz', '/readyz']);

/**
 * Traces to the OTLP endpoint of OTEL_EXPORTER_OTLP_ENDPOINT, over OTEL_EXPORTER_OTLP_PROTOCOL
 * (`http/protobuf` by default, `http/json`, `grpc`). HTTP in and out (undici's requests to agents
 * carry `traceparent`), Koa's routes and MongoDB's commands are traced; Temporal's interceptors
 * (src/tasks/temporal-client.ts, src/service/task-worker.ts) carry the trace through workflows and activities.
 * OTEL_NODE_DISABLED_INSTRUMENTATIONS (`http`, `koa`, `mongodb`, `undici`, comma-separated, as
 * @opentelemetry/auto-instrumentations-node reads it) leaves some out. The OpenTelemetry packages
 * read their other standard variables themselves (OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, OTEL_BSP_*,
 * OTEL_EXPORTER_OTLP_HEADERS, …): tracing is the one part outside src/config the environment reaches.
 */
export function startTracing(env: NodeJS.ProcessEnv): Tracing {
  const resource = new resources.Resource({
    'service.name': env.OTEL_SERVICE_NAME ?? 'agent-coordination-service',
  });
  const spanProcessor = new tracing.BatchSpanProcessor(exporterFor(env.OTEL_EXPORTER_OTLP_PROTOCOL));
  const provider = new node.NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The W3C trace context: `traceparent` in, on every request, and out, on every call and callback.
  provider.register();
  const disabled = new Set((env.OTEL_NODE_DISABLED_INSTRUMENTATIONS ?? '').split(',').map((name) => name.trim()));
  const instrumentations = {
    http: () =>
      new HttpInstrumentation({
        requireParentforOutgoingSpans: true,
        ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0]),
      }),
    // Each middleware would nest a span in the last: ten per request, around the one that matters, the route's.
    koa: () => new KoaInstrumentation({ ignoreLayersType: [KoaLayerType.MIDDLEWARE] }),
    // Calls out and commands outside any request or activity (a poll, a scrape of the SDK's
    // metrics) would each start a trace of their own: only those inside one are traced.
    mongodb: () => new MongoDBInstrumentation({ requireParentSpan: true, dbStatementSerializer: commandOf }),
    undici: () => new UndiciInstrumentation({ requireParentforSpans: true }),
  };
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: Object.entries(instrumentations)
      .filter(([name]) => !disabled.has(name))
      .map(([, instrumentation]) => instrumentation()),
  });
  const started = { spanProcessor, resource, shutdown: () => provider.shutdown() };
  setActiveTracing(started);
  return started;
}

/**
 * A command's name and collection (`insert tasks`) as its span's statement. The default walks the
 * whole command to mask its values, documents and all: the most expensive part of tracing a task
 * (bench/tasks --tracing), to tell what the span's name and collection already do.
 */
function commandOf(command: Record<string, unknown>): string {
  const [name] = Object.keys(command);
  return name === undefined ? '' : `${name} ${String(command[name])}`;
}

function exporterFor(protocol: string | undefined): tracing.SpanExporter {
  switch (protocol) {
    case 'grpc':
      return new GrpcExporter();
    case 'http/json':
      return new JsonExporter();
    default:
      return new ProtobufExporter();
  }
}
