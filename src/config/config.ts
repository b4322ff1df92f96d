import os from 'node:os';
import path from 'node:path';
import { MAX_COMPOSITION_SIZE_LIMIT, MAX_MAP_ITEMS_LIMIT } from './history-budget';

/**
 * Everything the service reads from its environment, parsed and checked once at start.
 * Nothing else in the code base reads `process.env`.
 */
export interface Config {
  port: number;
  host: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  dataDir: string;
  cacheDir: string;

  /** Unset means: start the embedded Temporal dev server. */
  temporalAddress?: string;
  temporalNamespace: string;
  /** The Temporal Web UI the web app links each run to; `npm start` links to its embedded one. */
  temporalUiUrl?: string;
  taskQueue: string;
  /** Unset means: start the embedded FerretDB. */
  mongoUri?: string;
  mongoDatabase: string;
  embeddedTemporalPort: number;
  embeddedTemporalUiPort: number;
  embeddedMongoPort: number;

  adminApiKey?: string;
  authJwksUrl?: string;
  authJwtSecret?: string;
  authIssuer?: string;
  authAudience?: string;
  /** Set: the identity token must carry this audience and the session token AUTH_AUDIENCE (src/auth/human-tokens.ts); unset: they differ by `typ`. */
  authIdentityAudience?: string;
  callbackSigningSecret?: string;
  /**
   * PUBLIC_URL: the service's base URL as agents reach it. Set, A2A agents whose card offers push
   * notifications are asked to POST their task updates to it (docs/a2a.md); unset, they are polled.
   */
  publicUrl?: string;
  /**
   * MCP_ALLOWED_ORIGINS: the web pages (their origins) that may call /mcp from a browser, besides
   * loopback ones and PUBLIC_URL's; a request with another Origin is refused 403 (DNS rebinding).
   */
  mcpAllowedOrigins: string[];
  /**
   * SECRETS_KEY: seals the agents' signing secrets in the store (src/auth/secret-box.ts). Required
   * with MONGODB_URI; `npm start` on its embedded FerretDB generates one into DATA_DIR.
   */
  secretsKey?: Buffer;
  /** SECRETS_KEY_PREVIOUS: keys that still open what they sealed, until start-up re-seals it with SECRETS_KEY. */
  secretsKeysPrevious: Buffer[];
  /** Unset means: GET /metrics is open to anyone. */
  metricsToken?: string;
  /** METRICS_PER_AGENT: label the agent metrics with agent ids too (one series per agent). */
  metricsPerAgent: boolean;
  /** METRICS_PORT: where a process without the API (`npm run worker`) serves GET /metrics; 0 picks a free port. */
  metricsPort: number;
  /**
   * TEMPORAL_METRICS_PORT: the loopback port of the Temporal SDK's own Prometheus exporter, whose
   * metrics GET /metrics includes; 0 picks a free port.
   */
  temporalMetricsPort: number;

  allowInsecureAgentUrls: boolean;
  allowPrivateAgentUrls: boolean;

  maxBodyBytes: number;
  /** How long a client may take to send a request's headers before the connection is closed with 408. */
  httpHeadersTimeoutMs: number;
  /** How long a client may take to send a whole request, headers and body. */
  httpRequestTimeoutMs: number;
  maxCompositionSize: number;
  /** MAX_MAP_ITEMS: most elements of the array a map runs over; more fail the map MAP_TOO_LARGE. */
  maxMapItems: number;
  /** MAX_SCHEDULES_PER_CREATOR: most schedules one caller may have; admins have no bound. */
  maxSchedulesPerCreator: number;
  /** MAX_TASK_DEPTH: most hops below its root a task started on behalf of another may be (docs/api.md, "Lineage"). */
  maxTaskDepth: number;
  maxMessageChars: number;
  /** WebSocket ping interval; a connection silent for two intervals is closed. */
  wsHeartbeatMs: number;
  /** Bytes queued for one WebSocket reader before it is disconnected as too slow. */
  wsMaxBufferedBytes: number;
  defaultTaskTimeoutMs: number;
  maxTaskTimeoutMs: number;
  agentCallTimeoutMs: number;
  /** How long a worker keeps an MCP session no call uses before it ends it (src/agent-calls/mcp-session-pool.ts). */
  mcpSessionIdleMs: number;
  /** Checks of data against agents' schemas, on their own threads (src/user-schemas/check-pool.ts). */
  schemaChecks: SchemaChecksConfig;
  /** How often a worker process looks for task workflows that closed without ending their tasks. */
  endedRunsCheckMs: number;
  /** How room messages stored by other API processes reach this one's sockets (src/rooms/message-fanout.ts). */
  roomFanout: RoomFanout;
  /** Limits on what one principal or one address may do; counted in each process's memory (src/limits/). */
  limits: LimitsConfig;
}

export interface SchemaChecksConfig {
  /** SCHEMA_CHECK_THREADS: how many checks run at once, each on its own thread. */
  threads: number;
  /** SCHEMA_CHECK_TIMEOUT_MS: how long one check or compilation may run before it is cut off and refused. */
  timeoutMs: number;
}

/** Each count is per RATE_LIMIT_WINDOW_MS for rates, at once for caps; 0 turns that limit off. */
export interface LimitsConfig {
  windowMs: number;
  /** Writes (any method but GET, HEAD, OPTIONS) of one non-admin principal per window. */
  writesPerPrincipal: number;
  /** Reads (GET, HEAD, OPTIONS, A2A reads, WebSocket handshakes) of one non-admin principal per window. */
  readsPerPrincipal: number;
  /** Requests without a credential from one address per window (ops routes excepted). */
  anonymousPerAddress: number;
  /** Rejected credentials from one address per window; one more and the address is blocked. */
  authFailuresPerAddress: number;
  /** How long an address over its authentication failures is refused; 0: until its window ends. */
  authFailureBlockMs: number;
  /** The least time between two refreshes of one agent's capabilities by a non-admin; 0: no limit. */
  capabilityRefreshIntervalMs: number;
  socketsPerPrincipal: number;
  socketsPerAddress: number;
  /** Open TCP connections from one address, WebSockets included; the next one is closed at once. */
  connectionsPerAddress: number;
  /** Proxies in front whose X-Forwarded-For entries name the client; 0: the peer of the connection is the client. */
  trustedProxies: number;
}

/** `poll` is the default on every server: `change-streams` has never run in this project's tests (no replica set here). */
export const ROOM_FANOUT_MODES = ['poll', 'change-streams'] as const;
export type RoomFanout = (typeof ROOM_FANOUT_MODES)[number];

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The sealing key's length: AES-256 (src/auth/secret-box.ts seals with it). */
export const SECRET_KEY_BYTES = 32;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const HOUR_MS = 3_600_000;

/** Reads one variable at a time and remembers every problem, so the operator sees them all at once. */
class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  string(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return value;
  }

  boolean(name: string): boolean {
    const raw = this.string(name);
    if (raw === undefined) return false;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    this.problems.push(`${name} must be "true" or "false", got "${raw}"`);
    return false;
  }

  url(name: string, protocols: string[]): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    try {
      const parsed = new URL(raw);
      if (protocols.includes(parsed.protocol)) return raw;
    } catch {
      // reported below
    }
    this.problems.push(`${name} must be a URL starting with ${protocols.join(' or ')}, got "${raw}"`);
    return undefined;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
    return fallback;
  }

  /** Comma-separated keys, each the base64 of SECRET_KEY_BYTES random bytes (`openssl rand -base64 32`). */
  secretKeys(name: string): Buffer[] {
    const raw = this.string(name);
    if (raw === undefined) return [];
    const keys = raw.split(',').map((text) => text.trim());
    if (
      keys.every(
        (text) =>
          Buffer.from(text, 'base64').length === SECRET_KEY_BYTES &&
          Buffer.from(text, 'base64').toString('base64') === text,
      )
    ) {
      return keys.map((text) => Buffer.from(text, 'base64'));
    }
    this.problems.push(
      `${name} must be the base64 of ${SECRET_KEY_BYTES} random bytes (openssl rand -base64 ${SECRET_KEY_BYTES})${name.endsWith('PREVIOUS') ? ', or several separated by commas' : ''}`,
    );
    return [];
  }

  /** Comma-separated web origins (`https://app.example`, no path), as the Origin header names them. */
  origins(name: string): string[] {
    const raw = this.string(name);
    if (raw === undefined) return [];
    const origins = raw.split(',').map((text) => text.trim());
    const bad = origins.filter((text) => {
      try {
        const parsed = new URL(text);
        return !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== text;
      } catch {
        return true;
      }
    });
    if (bad.length === 0) return origins;
    this.problems.push(
      `${name} must be web origins such as https://app.example, separated by commas; not ${bad.join(', ')}`,
    );
    return [];
  }

  hostPort(name: string): string | undefined {
    const raw = this.string(name);
    if (raw === undefined || /^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/.test(raw)) return raw;
    this.problems.push(`${name} must be host:port, got "${raw}"`);
    return undefined;
  }
}

/** A Standard Webhooks secret: `whsec_` + base64 of a 24 to 64 byte key. */
function isWebhookSecret(secret: string): boolean {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret);
  const keyBytes = match ? Buffer.from(match[1], 'base64').length : 0;
  return keyBytes >= 24 && keyBytes <= 64;
}

export function loadConfig(env: Env = process.env): Config {
  const read = new EnvReader(env);
  const cwd = process.cwd();
  const cacheHome = read.string('XDG_CACHE_HOME') ?? path.join(os.homedir(), '.cache');

  const secretsKeys = read.secretKeys('SECRETS_KEY');
  const config: Config = {
    port: read.integer('PORT', 3000, 0, 65535),
    host: read.string('HOST') ?? '127.0.0.1',
    logLevel: read.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    dataDir: path.resolve(cwd, read.string('DATA_DIR') ?? '.data'),
    cacheDir: path.resolve(read.string('ACS_CACHE_DIR') ?? path.join(cacheHome, 'agent-coordination-service')),

    temporalAddress: read.hostPort('TEMPORAL_ADDRESS'),
    temporalNamespace: read.string('TEMPORAL_NAMESPACE') ?? 'default',
    temporalUiUrl: read.url('TEMPORAL_UI_URL', ['http:', 'https:'])?.replace(/\/$/, ''),
    taskQueue: read.string('TEMPORAL_TASK_QUEUE') ?? 'agent-tasks',
    mongoUri: read.url('MONGODB_URI', ['mongodb:', 'mongodb+srv:']),
    mongoDatabase: read.string('MONGODB_DATABASE') ?? 'agent_coordination',
    embeddedTemporalPort: read.integer('EMBEDDED_TEMPORAL_PORT', 7233, 1, 65535),
    embeddedTemporalUiPort: read.integer('EMBEDDED_TEMPORAL_UI_PORT', 8233, 1, 65535),
    embeddedMongoPort: read.integer('EMBEDDED_MONGODB_PORT', 27017, 1, 65535),

    adminApiKey: read.string('ADMIN_API_KEY'),
    authJwksUrl: read.url('AUTH_JWKS_URL', ['https:', 'http:']),
    authJwtSecret: read.string('AUTH_JWT_SECRET'),
    authIssuer: read.string('AUTH_ISSUER'),
    authAudience: read.string('AUTH_AUDIENCE'),
    authIdentityAudience: read.string('AUTH_IDENTITY_AUDIENCE'),
    callbackSigningSecret: read.string('CALLBACK_SIGNING_SECRET'),
    publicUrl: read.url('PUBLIC_URL', ['https:', 'http:']),
    mcpAllowedOrigins: read.origins('MCP_ALLOWED_ORIGINS'),
    metricsToken: read.string('METRICS_TOKEN'),
    metricsPerAgent: read.boolean('METRICS_PER_AGENT'),
    metricsPort: read.integer('METRICS_PORT', 9464, 0, 65535),
    temporalMetricsPort: read.integer('TEMPORAL_METRICS_PORT', 0, 0, 65535),
    secretsKey: secretsKeys[0],
    secretsKeysPrevious: read.secretKeys('SECRETS_KEY_PREVIOUS'),

    allowInsecureAgentUrls: read.boolean('ALLOW_INSECURE_AGENT_URLS'),
    allowPrivateAgentUrls: read.boolean('ALLOW_PRIVATE_AGENT_URLS'),

    maxBodyBytes: read.integer('MAX_BODY_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    httpHeadersTimeoutMs: read.integer('HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 10 * 60_000),
    httpRequestTimeoutMs: read.integer('HTTP_REQUEST_TIMEOUT_MS', 60_000, 100, 60 * 60_000),
    maxCompositionSize: read.integer('MAX_COMPOSITION_SIZE', 100, 1, MAX_COMPOSITION_SIZE_LIMIT),
    maxMapItems: read.integer('MAX_MAP_ITEMS', 10_000, 1, MAX_MAP_ITEMS_LIMIT),
    maxSchedulesPerCreator: read.integer('MAX_SCHEDULES_PER_CREATOR', 100, 1, 100_000),
    maxTaskDepth: read.integer('MAX_TASK_DEPTH', 8, 0, 1_000),
    maxMessageChars: read.integer('MAX_MESSAGE_CHARS', 16_384, 1, 1024 * 1024),
    wsHeartbeatMs: read.integer('WS_HEARTBEAT_MS', 30_000, 50, 10 * 60_000),
    wsMaxBufferedBytes: read.integer('WS_MAX_BUFFERED_BYTES', 4 * 1024 * 1024, 64 * 1024, 1024 * 1024 * 1024),
    defaultTaskTimeoutMs: read.integer('DEFAULT_TASK_TIMEOUT_MS', 24 * HOUR_MS, 1_000, 365 * 24 * HOUR_MS),
    maxTaskTimeoutMs: read.integer('MAX_TASK_TIMEOUT_MS', 7 * 24 * HOUR_MS, 1_000, 365 * 24 * HOUR_MS),
    agentCallTimeoutMs: read.integer('AGENT_CALL_TIMEOUT_MS', 30_000, 100, 10 * 60_000),
    mcpSessionIdleMs: read.integer('MCP_SESSION_IDLE_MS', 120_000, 100, 24 * HOUR_MS),
    schemaChecks: {
      threads: read.integer('SCHEMA_CHECK_THREADS', Math.min(4, os.availableParallelism()), 1, 64),
      timeoutMs: read.integer('SCHEMA_CHECK_TIMEOUT_MS', 1_000, 10, 10 * 60_000),
    },
    endedRunsCheckMs: read.integer('ENDED_RUNS_CHECK_MS', 10_000, 100, 10 * 60_000),
    roomFanout: read.oneOf('ROOM_FANOUT', ROOM_FANOUT_MODES, 'poll'),
    limits: {
      windowMs: read.integer('RATE_LIMIT_WINDOW_MS', 60_000, 100, HOUR_MS),
      writesPerPrincipal: read.integer('RATE_LIMIT_WRITES', 1_200, 0, 1_000_000_000),
      readsPerPrincipal: read.integer('RATE_LIMIT_READS', 6_000, 0, 1_000_000_000),
      anonymousPerAddress: read.integer('RATE_LIMIT_ANONYMOUS_REQUESTS', 300, 0, 1_000_000_000),
      authFailuresPerAddress: read.integer('RATE_LIMIT_AUTH_FAILURES', 20, 0, 1_000_000_000),
      authFailureBlockMs: read.integer('AUTH_FAILURE_BLOCK_MS', 300_000, 0, 24 * HOUR_MS),
      capabilityRefreshIntervalMs: read.integer('CAPABILITY_REFRESH_INTERVAL_MS', 60_000, 0, 24 * HOUR_MS),
      socketsPerPrincipal: read.integer('WS_MAX_SOCKETS_PER_PRINCIPAL', 100, 0, 1_000_000_000),
      socketsPerAddress: read.integer('WS_MAX_SOCKETS_PER_ADDRESS', 500, 0, 1_000_000_000),
      connectionsPerAddress: read.integer('HTTP_MAX_CONNECTIONS_PER_ADDRESS', 1_000, 0, 1_000_000_000),
      trustedProxies: read.integer('TRUSTED_PROXIES', 0, 0, 16),
    },
  };

  if (config.authJwtSecret !== undefined && config.authJwtSecret.length < 32) {
    read.problems.push('AUTH_JWT_SECRET must be at least 32 characters (HS256 key)');
  }
  // Told apart by audience, the two tokens need two audiences: one alone would let either token stand for the other.
  if (
    config.authIdentityAudience !== undefined &&
    (config.authAudience === undefined || config.authAudience === config.authIdentityAudience)
  ) {
    read.problems.push("AUTH_IDENTITY_AUDIENCE needs AUTH_AUDIENCE set to another audience (the session token's)");
  }
  if (config.adminApiKey !== undefined && config.adminApiKey.length < 16) {
    read.problems.push('ADMIN_API_KEY must be at least 16 characters');
  }
  if (config.metricsToken !== undefined && config.metricsToken.length < 16) {
    read.problems.push('METRICS_TOKEN must be at least 16 characters');
  }
  if (config.callbackSigningSecret !== undefined && !isWebhookSecret(config.callbackSigningSecret)) {
    read.problems.push(
      'CALLBACK_SIGNING_SECRET must be whsec_ followed by the base64 of 24 to 64 random bytes (Standard Webhooks)',
    );
  }
  if (secretsKeys.length > 1)
    read.problems.push('SECRETS_KEY is one key; keys being retired go in SECRETS_KEY_PREVIOUS');
  // Without a key the secrets would be stored in plaintext, or sealed with a key nobody kept.
  if (config.mongoUri !== undefined && config.secretsKey === undefined) {
    read.problems.push(
      "SECRETS_KEY must be set with MONGODB_URI: it seals the agents' signing secrets in the store (openssl rand -base64 32; keep it, as the stored secrets open only with it)",
    );
  }
  if (config.defaultTaskTimeoutMs > config.maxTaskTimeoutMs) {
    read.problems.push('DEFAULT_TASK_TIMEOUT_MS must not exceed MAX_TASK_TIMEOUT_MS');
  }
  // Node refuses to start a server whose headers timeout exceeds its request timeout.
  if (config.httpHeadersTimeoutMs > config.httpRequestTimeoutMs) {
    read.problems.push('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  // A WebSocket holds the connection it was opened on, so a smaller connection cap would be the real socket cap.
  const { socketsPerAddress, connectionsPerAddress } = config.limits;
  if (connectionsPerAddress > 0 && socketsPerAddress > connectionsPerAddress) {
    read.problems.push(
      'WS_MAX_SOCKETS_PER_ADDRESS must not exceed HTTP_MAX_CONNECTIONS_PER_ADDRESS: every WebSocket holds a connection',
    );
  }
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  return config;
}
