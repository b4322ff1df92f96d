import { Client, ServiceError, isGrpcServiceError } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { Config } from '../config/config';
import type { ErrorMapper } from '../http/error-handler';
import { UnavailableError, UnavailableReason } from '../http/errors';
import type { Logger } from '../ops/logger';
import { TemporalMetrics } from '../ops/temporal-metrics';
import { activeTracing } from '../ops/tracing';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';

/**
 * gRPC status codes with which Temporal says "not now": the request may succeed if sent again, so
 * the API answers 503 with Retry-After rather than 500. Each maps to the words an error message uses.
 */
const TRANSIENT_GRPC_CODES = new Map([
  [1 /* CANCELLED */, 'dropped the request'],
  [4 /* DEADLINE_EXCEEDED */, 'did not answer in time'],
  [8 /* RESOURCE_EXHAUSTED */, 'is over its rate or capacity limits'],
  [10 /* ABORTED */, 'aborted the request'],
  [14 /* UNAVAILABLE */, 'is unreachable'],
]);

export interface TemporalHandle {
  client: Client;
  /** Shared by the client and every worker of this process. */
  connection: NativeConnection;
  /** The SDK's own metrics, which GET /metrics includes. */
  metrics: TemporalMetrics;
  /** Resolves when the frontend answers a health check within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

let runtimeMetrics: Promise<TemporalMetrics> | undefined;

/**
 * Temporal's runtime is process-wide and must exist before the first connection. Its logs join
 * ours, and its metrics are served on loopback for GET /metrics to include; it must not take
 * SIGINT/SIGTERM, because the entry point shuts the whole process down in order.
 */
function installRuntime(logger: Logger, metricsPort: number): Promise<TemporalMetrics> {
  runtimeMetrics ??= TemporalMetrics.onPort(metricsPort).then((metrics) => {
    install(logger, metrics);
    return metrics;
  });
  return runtimeMetrics;
}

function install(logger: Logger, metrics: TemporalMetrics): void {
  const temporalLogger = logger.child({ sdk: 'temporal' });
  Runtime.install({
    shutdownSignals: [],
    telemetryOptions: {
      // Seconds and `_total`, as the service's own metrics and Prometheus's conventions have them.
      metrics: {
        prometheus: { bindAddress: metrics.bindAddress, useSecondsForDurations: true, countersTotalSuffix: true },
      },
    },
    logger: new DefaultLogger('WARN', ({ level, message, meta }) => {
      const method = level === 'ERROR' ? 'error' : level === 'WARN' ? 'warn' : 'debug';
      temporalLogger[method](meta ?? {}, message);
    }),
  });
}

/**
 * One native connection for the client and the workers of this process. Sharing it is what lets a
 * task's workflow start eagerly: when this process runs the task worker, the first workflow task
 * comes back with the start's reply instead of through the server's task matching.
 */
export async function connectTemporal(
  config: Pick<Config, 'temporalNamespace' | 'temporalMetricsPort'> & { temporalAddress: string },
  logger: Logger,
): Promise<TemporalHandle> {
  const metrics = await installRuntime(logger, config.temporalMetricsPort);
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  // With tracing on, a workflow's start carries the request's trace to the workflow (src/service/task-worker.ts).
  const client = new Client({
    connection,
    namespace: config.temporalNamespace,
    ...(activeTracing() ? { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } } : {}),
  });
  return {
    client,
    connection,
    metrics,
    async ping(timeoutMs = 2_000) {
      await connection.withDeadline(Date.now() + timeoutMs, () => connection.healthService.check({}));
    },
    close: () => connection.close(),
  };
}

/** What went wrong, when `error` is Temporal saying "not now" (TRANSIENT_GRPC_CODES); otherwise undefined. */
export function temporalOutage(error: unknown): string | undefined {
  const cause = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(cause) ? TRANSIENT_GRPC_CODES.get(cause.code) : undefined;
}

/** Temporal saying "not now" is a 503 with Retry-After, for the HTTP kit's error handler. */
export const temporalErrors: ErrorMapper = (thrown) => {
  const outage = temporalOutage(thrown);
  return outage
    ? new UnavailableError(UnavailableReason.TEMPORAL, `Temporal ${outage}; try again`, undefined, {
        'Retry-After': '1',
      })
    : undefined;
};
