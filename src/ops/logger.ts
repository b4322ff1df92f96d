import { trace } from '@opentelemetry/api';
import pino, { type DestinationStream, type LogFn, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from '../config/config';
import { withoutCredentials } from '../util/url-credentials';

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
    redact: { paths: [...SECRET_PATHS, ...URL_PATHS], censor },
    hooks: { logMethod },
    mixin: traceContext,
  };
  // pino-pretty as a stream in this thread rather than a transport's worker: lines keep their order
  // with what the process prints itself, and the last ones are not lost when it exits.
  return destination.isTTY
    ? pino(options, pretty({ destination, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' }))
    : pino(options, destination);
}

/**
 * Members that hold secrets, at the top of a line or one level down: keys, signing secrets, every
 * header's value (an agent's registered headers, a request's), and the task tokens the Temporal SDK
 * adds to an activity's lines, with which anyone who reaches Temporal could complete the activity.
 */
const SECRET_PATHS = [
  'apiKey',
  '*.apiKey',
  'signingSecret',
  '*.signingSecret',
  'taskToken',
  '*.taskToken',
  'headers.*',
  '*.headers.*',
];

/** Members that hold a URL: kept, without its user name and password. */
const URL_PATHS = ['url', '*.url'];

function censor(value: unknown, path: string[]): unknown {
  return path.at(-1) === 'url' && typeof value === 'string' ? withoutCredentials(value) : '[redacted]';
}

/** A line's message, and any string argument, without a URL's credentials. */
function logMethod(this: Logger, args: Parameters<LogFn>, method: LogFn): void {
  const redacted = args.map((arg) => (typeof arg === 'string' ? withoutCredentials(arg) : arg));
  method.apply(this, redacted as Parameters<LogFn>);
}

function traceContext(): { traceId?: string; spanId?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}
