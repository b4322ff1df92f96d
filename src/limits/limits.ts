import type { LimitsConfig } from '../config/config';
import type { Logger } from '../ops/logger';
import type { Metrics } from '../ops/metrics';
import { ConcurrencyCap } from './concurrency-cap';
import { clientAddressOf, type ClientAddress } from './limit-keys';
import { LimitReporter } from './limit-reporter';
import { RateLimit } from './rate-limit';

/** Every limit of one API process, each counted in its memory (docs/configuration.md, "Limits"). */
export interface Limits {
  writesPerPrincipal: RateLimit;
  readsPerPrincipal: RateLimit;
  anonymousPerAddress: RateLimit;
  authFailuresPerAddress: RateLimit;
  capabilityRefreshesPerAgent: RateLimit;
  socketsPerPrincipal: ConcurrencyCap;
  socketsPerAddress: ConcurrencyCap;
  connectionsPerAddress: ConcurrencyCap;
  /** Where a request is from, for the limits counted per address (TRUSTED_PROXIES). */
  clientAddress: ClientAddress;
}

export function createLimits(config: LimitsConfig, logger: Logger, metrics: Metrics): Limits {
  const reporter = new LimitReporter(logger, metrics, config.windowMs);
  const windowMs = config.windowMs;
  return {
    writesPerPrincipal: new RateLimit(
      {
        name: 'writes',
        points: config.writesPerPrincipal,
        windowMs,
        message: `More than ${config.writesPerPrincipal} writes by this credential in ${windowMs} ms`,
      },
      reporter,
    ),
    readsPerPrincipal: new RateLimit(
      {
        name: 'reads',
        points: config.readsPerPrincipal,
        windowMs,
        message: `More than ${config.readsPerPrincipal} reads by this credential in ${windowMs} ms`,
      },
      reporter,
    ),
    anonymousPerAddress: new RateLimit(
      {
        name: 'anonymous',
        points: config.anonymousPerAddress,
        windowMs,
        message: `More than ${config.anonymousPerAddress} requests without a credential from this address in ${windowMs} ms`,
      },
      reporter,
    ),
    authFailuresPerAddress: new RateLimit(
      {
        name: 'auth-failures',
        points: config.authFailuresPerAddress,
        windowMs,
        blockMs: config.authFailureBlockMs,
        message: `More than ${config.authFailuresPerAddress} rejected credentials from this address; credentials from it are not checked for a while`,
      },
      reporter,
    ),
    // One refresh per agent and interval: a refresh reads the agent's server or card, at its owner's request.
    capabilityRefreshesPerAgent: new RateLimit(
      {
        name: 'capability-refreshes',
        points: config.capabilityRefreshIntervalMs > 0 ? 1 : 0,
        windowMs: Math.max(config.capabilityRefreshIntervalMs, 1),
        message: `This agent's capabilities were refreshed less than ${config.capabilityRefreshIntervalMs} ms ago`,
      },
      reporter,
    ),
    socketsPerPrincipal: new ConcurrencyCap('sockets-per-principal', config.socketsPerPrincipal, reporter),
    socketsPerAddress: new ConcurrencyCap('sockets-per-address', config.socketsPerAddress, reporter),
    connectionsPerAddress: new ConcurrencyCap('connections-per-address', config.connectionsPerAddress, reporter),
    clientAddress: clientAddressOf(config.trustedProxies),
  };
}
