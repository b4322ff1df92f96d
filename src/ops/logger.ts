import pino, { type Logger } from 'pino';
import type { Config } from '../config/config';

export type { Logger };

/** One JSON line per event on stdout; every part of the service takes a child with its own `component`. */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
    base: { service: 'agent-coordination-service' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['*.apiKey', '*.signingSecret', '*.headers["x-api-key"]', '*.headers.authorization'],
      censor: '[redacted]',
    },
  });
}
