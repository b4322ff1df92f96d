// Imported first by the entry points (start.ts, server.ts, worker.ts): the instrumentations patch
// http, Koa and MongoDB's driver as they load, so tracing starts before anything requires them.
// Without OTEL_EXPORTER_OTLP_ENDPOINT tracing is off and the OpenTelemetry SDK is not even loaded.
if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startTracing } = require('./tracing-sdk') as typeof import('./tracing-sdk');
  startTracing(process.env);
}

export {};
