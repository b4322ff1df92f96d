import { trace } from '@opentelemetry/api';
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from '../config/config';

export type { Logger };

/**
 * One JSON line per event on stdout, or readable lines when stdout is a terminal (`npm start` at a
 * prompt); every part of the service takes a child with its own `component`. A line written while
 * an OpenTelemetry span is active carries its `traceId` and `spanId`, to find the trace of a line.
 */
export function createLogger(
  config: Pick<Config, 'logLevel'>,
  destination: DestinationStream & { isTTY?: boolean } = process.stdout,
): Logger {
  const options = {
    level: config.logLevel,
    base: { service: 'agent-coordination-service' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['*.apiKey', '*.signingSecret', '*.headers["x-api-key"]', '*.headers.authorization'],
      censor: '[redacted]',
    },
    mixin: traceContext,
  };
  // pino-pretty as a stream in this thread rather than a transport's worker: lines keep their order
  // with what the process prints itself, and the last ones are not lost when it exits.
  return destination.isTTY
    ? pino(options, pretty({ destination, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' }))
    : pino(options, destination);
}

function traceContext(): { traceId?: string; spanId?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}
