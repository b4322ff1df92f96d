import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { mongoUriFor } from '../../src/embedded/ferretdb';
import { freePort, type ManagedProcess } from '../../src/embedded/managed-process';
import { ensureBinaries } from '../../src/embedded/provision';
import { startTemporalDevServer, temporalAddress } from '../../src/embedded/temporal-dev-server';
import { startServiceFerretDb } from './ferretdb';
import { ServiceProcess } from './service-process';
import { STACK_FILE_VARIABLE, type TestStack } from './test-stack';

const MONGO_DATABASE = 'acs_test';

export interface RunningTestStack {
  processes: ManagedProcess[];
  service: ServiceProcess;
  runDir: string;
}

/** Once per `npm test`: the real Temporal dev server and FerretDB on free loopback ports, and the service on top. */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const binaries = ensureBinaries(loadConfig().cacheDir);
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acs-test-'));
  const [temporalPort, mongoPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const namespace = 'default';
  const processes = await Promise.all([
    startTemporalDevServer({ binary: binaries.temporal, dataDir: runDir, port: temporalPort, namespace }),
    startServiceFerretDb({ binary: binaries.ferretdb, dataDir: runDir, port: mongoPort, database: MONGO_DATABASE }),
  ]);

  const stack: Omit<TestStack, 'servicePid'> = {
    baseUrl: `http://127.0.0.1:${apiPort}`,
    wsUrl: `ws://127.0.0.1:${apiPort}`,
    adminKey: `acs_admin_test_${randomBytes(16).toString('hex')}`,
    jwtSecret: randomBytes(32).toString('hex'),
    callbackSigningSecret: `whsec_${randomBytes(32).toString('base64')}`,
    temporalAddress: temporalAddress(temporalPort),
    temporalNamespace: namespace,
    taskQueue: 'agent-tasks',
    mongoUri: mongoUriFor(mongoPort),
    mongoDatabase: MONGO_DATABASE,
    runDir,
    binaries,
  };
  const service = ServiceProcess.spawn('start.ts', serviceEnv(stack, { PORT: String(apiPort) }), path.join(runDir, 'service.log'));
  try {
    await service.waitReady(stack.baseUrl);
  } catch (error) {
    await Promise.all(processes.map((process) => process.stop()));
    throw error;
  }

  const stackFile = path.join(runDir, 'stack.json');
  fs.writeFileSync(stackFile, JSON.stringify({ ...stack, servicePid: service.pid }, null, 2));
  process.env[STACK_FILE_VARIABLE] = stackFile;
  (globalThis as { acsTestStack?: RunningTestStack }).acsTestStack = { processes, service, runDir };
  process.stdout.write(`\n[test stack] ready in ${Date.now() - started} ms: ${stack.baseUrl}, Temporal ${stack.temporalAddress}, FerretDB ${stack.mongoUri}, logs in ${runDir}\n`);
}

/** The environment a service process of the test stack runs with; tests that start more processes reuse it. */
export function serviceEnv(stack: Omit<TestStack, 'servicePid'>, overrides: Record<string, string> = {}): Record<string, string> {
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
    ALLOW_INSECURE_AGENT_URLS: 'true',
    ALLOW_PRIVATE_AGENT_URLS: 'true',
    LOG_LEVEL: 'info',
    // A terminated workflow's tasks are ended within a second rather than 10 s.
    ENDED_RUNS_CHECK_MS: '500',
    ...overrides,
  };
}
