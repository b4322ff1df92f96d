import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { mongoUriFor } from '../../src/embedded/ferretdb';
import { type ManagedProcess } from '../../src/embedded/managed-process';
import { freePorts } from '../../src/util/ports';
import { ensureBinaries } from '../../src/embedded/provision';
import { startTemporalDevServer, temporalAddress } from '../../src/embedded/temporal-dev-server';
import { startServiceFerretDb } from './ferretdb';
import { ServiceProcess } from './service-process';
import { STACK_FILE_VARIABLE, type TestStack } from './test-stack';

/**
 * How long the service gets to stop gracefully. Its worker waits for the local activities in
 * flight, and an agent call made as one (by a run started before the call became a regular
 * activity) stays in flight between its retries until its last attempt: such a task with
 * `maxAttempts: 10` on an unreachable agent held SIGTERM for 95 s.
 */
const SERVICE_STOP_MS = 15_000;

export interface LocalStackOptions {
  /** Prefix of the temp folder that holds the servers' data and logs. */
  runDirPrefix: string;
  database: string;
  /** Serve the Temporal Web UI on a free loopback port too (the test suite runs without it). */
  webUi?: boolean;
  /** Variables of the service process beyond serviceEnv's. */
  env?: Record<string, string>;
  /** false: the dev server on SQLite's defaults (bench/tasks --sqlite-defaults). */
  tunedSqlite?: boolean;
}

export interface LocalStack {
  stack: TestStack;
  processes: ManagedProcess[];
  service: ServiceProcess;
  runDir: string;
  /** Set with `webUi`. */
  temporalUiUrl?: string;
  /** Stops the service (killed if it has not stopped within SERVICE_STOP_MS), then the servers; the temp folder stays. */
  stop(): Promise<void>;
}

/**
 * The real Temporal dev server and FerretDB on free loopback ports, and the service on top as a
 * child process, exactly as `npm start` runs it. The stack is written to `stack.json` in the run's
 * folder and named by ACS_TEST_STACK_FILE, so the helpers of test/support talk to it.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const binaries = ensureBinaries(loadConfig().cacheDir);
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), options.runDirPrefix));
  const [temporalPort, mongoPort, apiPort, webUiPort] = await freePorts(4);
  const uiPort = options.webUi ? webUiPort : undefined;
  const namespace = 'default';
  const processes = await Promise.all([
    startTemporalDevServer({
      binary: binaries.temporal,
      dataDir: runDir,
      port: temporalPort,
      uiPort,
      namespace,
      tunedSqlite: options.tunedSqlite,
    }),
    startServiceFerretDb({ binary: binaries.ferretdb, dataDir: runDir, port: mongoPort, database: options.database }),
  ]);
  const stopServers = () => Promise.all(processes.map((process) => process.stop()));

  const stack: Omit<TestStack, 'servicePid'> = {
    baseUrl: `http://127.0.0.1:${apiPort}`,
    wsUrl: `ws://127.0.0.1:${apiPort}`,
    adminKey: `acs_admin_test_${randomBytes(16).toString('hex')}`,
    jwtSecret: randomBytes(32).toString('hex'),
    callbackSigningSecret: `whsec_${randomBytes(32).toString('base64')}`,
    secretsKey: randomBytes(32).toString('base64'),
    temporalAddress: temporalAddress(temporalPort),
    temporalNamespace: namespace,
    taskQueue: 'agent-tasks',
    mongoUri: mongoUriFor(mongoPort),
    mongoDatabase: options.database,
    runDir,
    binaries,
  };
  const service = ServiceProcess.spawn(
    'start.ts',
    serviceEnv(stack, { PORT: String(apiPort), ...options.env }),
    path.join(runDir, 'service.log'),
  );
  try {
    await service.waitReady(stack.baseUrl);
  } catch (error) {
    await service.stop();
    await stopServers();
    throw error;
  }

  const stackFile = path.join(runDir, 'stack.json');
  const written: TestStack = { ...stack, servicePid: service.pid };
  fs.writeFileSync(stackFile, JSON.stringify(written, null, 2));
  process.env[STACK_FILE_VARIABLE] = stackFile;
  return {
    stack: written,
    processes,
    service,
    runDir,
    ...(uiPort === undefined ? {} : { temporalUiUrl: `http://127.0.0.1:${uiPort}` }),
    async stop() {
      await Promise.race([service.stop(), new Promise((resolve) => setTimeout(resolve, SERVICE_STOP_MS).unref())]);
      await service.stop('SIGKILL');
      await stopServers();
    },
  };
}

/** The environment a service process of the test stack runs with; tests that start more processes reuse it. */
export function serviceEnv(
  stack: Omit<TestStack, 'servicePid'>,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: stack.temporalNamespace,
    TEMPORAL_TASK_QUEUE: stack.taskQueue,
    MONGODB_URI: stack.mongoUri,
    MONGODB_DATABASE: stack.mongoDatabase,
    DATA_DIR: stack.runDir,
    ADMIN_API_KEY: stack.adminKey,
    AUTH_JWT_SECRET: stack.jwtSecret,
    CALLBACK_SIGNING_SECRET: stack.callbackSigningSecret,
    SECRETS_KEY: stack.secretsKey,
    // Where A2A agents that offer push notifications push their tasks' updates.
    PUBLIC_URL: stack.baseUrl,
    ALLOW_INSECURE_AGENT_URLS: 'true',
    ALLOW_PRIVATE_AGENT_URLS: 'true',
    LOG_LEVEL: 'info',
    // The web app links each run there (test/app/); nothing need answer for the link to be drawn.
    TEMPORAL_UI_URL: 'http://127.0.0.1:8233',
    // A terminated workflow's tasks are ended within a second rather than 10 s.
    ENDED_RUNS_CHECK_MS: '500',
    // Every test calls from 127.0.0.1, so per-address limits would count the whole suite as one
    // client: they are raised far beyond it. Per-principal limits (writes, reads) keep their defaults,
    // which the suite's fresh principals stay under (a test polls every 50 ms at most: 1 200 reads a
    // minute). test/limits.test.ts and test/fair-reads.test.ts test the limits on services of their own.
    RATE_LIMIT_ANONYMOUS_REQUESTS: '1000000',
    RATE_LIMIT_AUTH_FAILURES: '1000000',
    WS_MAX_SOCKETS_PER_ADDRESS: '100000',
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: '100000',
    // The suite's checks of large params share two cores with every other test file: on such a
    // machine a legitimate 80 000-item check ran past the default 1 s. Cutting costly checks off
    // is tested on a service of its own at the default (test/security/event-loop-stalls.test.ts).
    SCHEMA_CHECK_TIMEOUT_MS: '10000',
    // Worker-only processes serve /metrics on a port of their own: any free one, as several may run.
    METRICS_PORT: '0',
    ...overrides,
  };
}
