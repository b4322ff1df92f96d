import path from 'node:path';
import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({ HOME: '/home/someone' });
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      temporalAddress: undefined,
      mongoUri: undefined,
      temporalNamespace: 'default',
      taskQueue: 'agent-tasks',
      maxBodyBytes: 1024 * 1024,
      httpHeadersTimeoutMs: 10_000,
      httpRequestTimeoutMs: 60_000,
      maxCompositionSize: 100,
      maxMapItems: 10_000,
      maxSchedulesPerCreator: 100,
      maxTaskDepth: 8,
      maxMessageChars: 16_384,
      defaultTaskTimeoutMs: 24 * 3_600_000,
      allowInsecureAgentUrls: false,
      allowPrivateAgentUrls: false,
      dataDir: path.resolve('.data'),
      mcpAllowedOrigins: [],
    });
  });

  it('reads every variable it is given', () => {
    const config = loadConfig({
      PORT: '8080',
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      MONGODB_URI: 'mongodb://db.internal:27017/?replicaSet=rs0',
      SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
      ALLOW_INSECURE_AGENT_URLS: 'true',
      MAX_BODY_BYTES: '2048',
      MAX_TASK_DEPTH: '3',
      LOG_LEVEL: 'debug',
      MCP_ALLOWED_ORIGINS: 'https://app.example, http://tools.example:8080',
    });
    expect(config).toMatchObject({
      port: 8080,
      temporalAddress: 'temporal.internal:7233',
      mongoUri: 'mongodb://db.internal:27017/?replicaSet=rs0',
      secretsKey: Buffer.alloc(32, 1),
      allowInsecureAgentUrls: true,
      maxBodyBytes: 2048,
      maxTaskDepth: 3,
      logLevel: 'debug',
      mcpAllowedOrigins: ['https://app.example', 'http://tools.example:8080'],
    });
  });

  it('reports every bad value at once, each by name', () => {
    let thrown: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        MONGODB_URI: 'http://nope',
        ALLOW_PRIVATE_AGENT_URLS: 'yes',
        LOG_LEVEL: 'loud',
        AUTH_JWT_SECRET: 'short',
        TEMPORAL_ADDRESS: 'no port',
        MCP_ALLOWED_ORIGINS: 'https://app.example/path',
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const problems = (thrown as ConfigError).problems.join('\n');
    for (const name of [
      'PORT',
      'MONGODB_URI',
      'ALLOW_PRIVATE_AGENT_URLS',
      'LOG_LEVEL',
      'AUTH_JWT_SECRET',
      'TEMPORAL_ADDRESS',
      'MCP_ALLOWED_ORIGINS',
    ]) {
      expect(problems).toContain(name);
    }
    expect((thrown as ConfigError).problems).toHaveLength(7);
  });

  it.each([
    ['no whsec_ prefix', Buffer.alloc(32, 7).toString('base64')],
    ['a key that is not base64', 'whsec_not base64!'],
    ['a key of 8 bytes', `whsec_${Buffer.alloc(8, 7).toString('base64')}`],
  ])('refuses a CALLBACK_SIGNING_SECRET with %s', (_what, secret) => {
    expect(() => loadConfig({ CALLBACK_SIGNING_SECRET: secret })).toThrow(/CALLBACK_SIGNING_SECRET must be whsec_/);
  });

  it('takes a CALLBACK_SIGNING_SECRET of 32 random bytes', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(loadConfig({ CALLBACK_SIGNING_SECRET: secret }).callbackSigningSecret).toBe(secret);
  });

  it('requires SECRETS_KEY with MONGODB_URI, and leaves it to npm start on its embedded FerretDB', () => {
    expect(() => loadConfig({ MONGODB_URI: 'mongodb://db.internal:27017' })).toThrow(
      /SECRETS_KEY must be set with MONGODB_URI/,
    );
    expect(loadConfig({}).secretsKey).toBeUndefined();
  });

  it.each([
    ['a key of 16 bytes', Buffer.alloc(16, 7).toString('base64')],
    ['text that is not base64', 'not a key at all, not one bit of it!!'],
    ['two keys', `${Buffer.alloc(32, 7).toString('base64')},${Buffer.alloc(32, 8).toString('base64')}`],
  ])('refuses a SECRETS_KEY of %s', (_what, key) => {
    expect(() => loadConfig({ SECRETS_KEY: key })).toThrow(
      /SECRETS_KEY (must be the base64 of 32 random bytes|is one key)/,
    );
  });

  it('takes SECRETS_KEY and any number of SECRETS_KEY_PREVIOUS keys, comma-separated', () => {
    const [current, older, oldest] = [1, 2, 3].map((fill) => Buffer.alloc(32, fill));
    const config = loadConfig({
      SECRETS_KEY: current.toString('base64'),
      SECRETS_KEY_PREVIOUS: `${older.toString('base64')}, ${oldest.toString('base64')}`,
    });
    expect(config).toMatchObject({ secretsKey: current, secretsKeysPrevious: [older, oldest] });
    expect(() => loadConfig({ SECRETS_KEY_PREVIOUS: 'short' })).toThrow(
      /SECRETS_KEY_PREVIOUS must be the base64 of 32 random bytes/,
    );
  });

  it('takes AUTH_IDENTITY_AUDIENCE only beside another AUTH_AUDIENCE', () => {
    expect(loadConfig({ AUTH_AUDIENCE: 'api', AUTH_IDENTITY_AUDIENCE: 'web-client' })).toMatchObject({
      authAudience: 'api',
      authIdentityAudience: 'web-client',
    });
    expect(() => loadConfig({ AUTH_IDENTITY_AUDIENCE: 'web-client' })).toThrow(
      /AUTH_IDENTITY_AUDIENCE needs AUTH_AUDIENCE/,
    );
    expect(() => loadConfig({ AUTH_AUDIENCE: 'api', AUTH_IDENTITY_AUDIENCE: 'api' })).toThrow(
      /AUTH_IDENTITY_AUDIENCE needs AUTH_AUDIENCE set to another audience/,
    );
  });

  it('refuses a MAX_COMPOSITION_SIZE whose workflow history would outgrow its budget', () => {
    expect(loadConfig({ MAX_COMPOSITION_SIZE: '379' }).maxCompositionSize).toBe(379);
    expect(() => loadConfig({ MAX_COMPOSITION_SIZE: '380' })).toThrow(/MAX_COMPOSITION_SIZE/);
  });

  it("refuses a MAX_MAP_ITEMS whose map workflow's history would outgrow its budget", () => {
    expect(loadConfig({ MAX_MAP_ITEMS: '218368' }).maxMapItems).toBe(218_368);
    expect(() => loadConfig({ MAX_MAP_ITEMS: '218369' })).toThrow(/MAX_MAP_ITEMS/);
  });

  it('refuses an HTTP headers timeout above the request timeout, as Node would', () => {
    expect(loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '5000' })).toMatchObject({
      httpHeadersTimeoutMs: 5_000,
      httpRequestTimeoutMs: 5_000,
    });
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5001', HTTP_REQUEST_TIMEOUT_MS: '5000' })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS/,
    );
  });

  it('fans room messages out by polling unless ROOM_FANOUT=change-streams, and refuses any other value', () => {
    expect(loadConfig({}).roomFanout).toBe('poll');
    expect(loadConfig({ ROOM_FANOUT: 'poll' }).roomFanout).toBe('poll');
    expect(loadConfig({ ROOM_FANOUT: 'change-streams' }).roomFanout).toBe('change-streams');
    expect(() => loadConfig({ ROOM_FANOUT: 'change_stream' })).toThrow(
      /ROOM_FANOUT must be one of poll, change-streams, got "change_stream"/,
    );
  });

  it('gives the documented limits by default, takes 0 to turn each off, and refuses negative ones', () => {
    expect(loadConfig({}).limits).toEqual({
      windowMs: 60_000,
      writesPerPrincipal: 1_200,
      readsPerPrincipal: 6_000,
      anonymousPerAddress: 300,
      authFailuresPerAddress: 20,
      authFailureBlockMs: 300_000,
      capabilityRefreshIntervalMs: 60_000,
      socketsPerPrincipal: 100,
      socketsPerAddress: 500,
      connectionsPerAddress: 1_000,
      trustedProxies: 0,
    });
    const off = {
      RATE_LIMIT_WRITES: '0',
      RATE_LIMIT_READS: '0',
      RATE_LIMIT_ANONYMOUS_REQUESTS: '0',
      RATE_LIMIT_AUTH_FAILURES: '0',
      WS_MAX_SOCKETS_PER_PRINCIPAL: '0',
      WS_MAX_SOCKETS_PER_ADDRESS: '0',
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0',
      CAPABILITY_REFRESH_INTERVAL_MS: '0',
    };
    expect(loadConfig(off).limits).toMatchObject({
      writesPerPrincipal: 0,
      readsPerPrincipal: 0,
      anonymousPerAddress: 0,
      authFailuresPerAddress: 0,
      socketsPerPrincipal: 0,
      socketsPerAddress: 0,
      connectionsPerAddress: 0,
      capabilityRefreshIntervalMs: 0,
    });
    expect(() => loadConfig({ RATE_LIMIT_WRITES: '-1' })).toThrow(/RATE_LIMIT_WRITES must be an integer from 0/);
    expect(() => loadConfig({ RATE_LIMIT_WINDOW_MS: '0' })).toThrow(/RATE_LIMIT_WINDOW_MS must be an integer from 100/);
    expect(loadConfig({ TRUSTED_PROXIES: '2' }).limits.trustedProxies).toBe(2);
    expect(() => loadConfig({ TRUSTED_PROXIES: 'all' })).toThrow(/TRUSTED_PROXIES must be an integer from 0/);
  });

  it('refuses a WebSocket cap per address above the connection cap per address, which would never be reached', () => {
    expect(
      loadConfig({ WS_MAX_SOCKETS_PER_ADDRESS: '50', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '50' }).limits,
    ).toMatchObject({ socketsPerAddress: 50, connectionsPerAddress: 50 });
    expect(
      loadConfig({ WS_MAX_SOCKETS_PER_ADDRESS: '5000', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0' }).limits,
    ).toMatchObject({ socketsPerAddress: 5_000, connectionsPerAddress: 0 });
    expect(() => loadConfig({ WS_MAX_SOCKETS_PER_ADDRESS: '51', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '50' })).toThrow(
      /WS_MAX_SOCKETS_PER_ADDRESS must not exceed HTTP_MAX_CONNECTIONS_PER_ADDRESS/,
    );
  });

  it('refuses a default task timeout above the maximum', () => {
    expect(() => loadConfig({ DEFAULT_TASK_TIMEOUT_MS: '100000', MAX_TASK_TIMEOUT_MS: '5000' })).toThrow(
      /DEFAULT_TASK_TIMEOUT_MS/,
    );
  });
});
