import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig, SECRET_KEY_BYTES, type Config, type Env } from './config/config';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from './embedded/data-dir';
import { ensurePortsFree, PortTakenError, type ExitStatus, type ManagedProcess } from './embedded/managed-process';
import { embeddedPorts, startEmbeddedStack, type EmbeddedStack, type Endpoints } from './embedded/stack';
import { createLogger } from './ops/logger';
import { activeTracing } from './ops/tracing';
import { startService, type RunningService, type ServiceOptions } from './service';
import { SERVICE_COLLECTIONS } from './service/collections';

export interface MainOptions extends ServiceOptions {
  /** Start the Temporal dev server and FerretDB for what TEMPORAL_ADDRESS / MONGODB_URI leave unset. */
  embedded: boolean;
  /** Values used where the environment sets nothing (npm start's development defaults). */
  envDefaults?: Env;
}

/** The one start-up path behind `npm start`, `npm run server` and `npm run worker`. */
export async function main(options: MainOptions): Promise<void> {
  let config: Config;
  try {
    config = loadConfig({ ...options.envDefaults, ...process.env });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  const logger = createLogger(config);
  if (options.embedded && options.api && !config.adminApiKey) {
    config = {
      ...config,
      adminApiKey: persistentSecret(
        config.dataDir,
        'admin-api-key',
        () => `acs_admin_${randomBytes(24).toString('base64url')}`,
      ),
    };
  }
  // With MONGODB_URI set the configuration requires SECRETS_KEY: the data is not this folder's.
  if (options.embedded && !config.secretsKey) {
    config = {
      ...config,
      secretsKey: Buffer.from(
        persistentSecret(config.dataDir, 'secrets-key', () => randomBytes(SECRET_KEY_BYTES).toString('base64')),
        'base64',
      ),
    };
  }
  if (options.embedded && !config.callbackSigningSecret) {
    config = {
      ...config,
      callbackSigningSecret: persistentSecret(
        config.dataDir,
        'callback-signing-secret',
        () => `whsec_${randomBytes(32).toString('base64')}`,
      ),
    };
  }

  await ensurePortsFree([
    ...(options.api ? [{ variable: 'PORT', host: config.host, port: config.port, user: 'the API' }] : []),
    ...(options.embedded ? embeddedPorts(config) : []),
  ]);

  // Handlers go in first, so Ctrl-C during start-up still stops what was started.
  let stack: EmbeddedStack | undefined;
  let service: RunningService | undefined;
  let stopping = false;
  const shutdown = async (reason: string, exitCode: number, serviceStopMs?: number) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    const serviceStopped = service?.stop();
    await (serviceStopMs === undefined
      ? serviceStopped
      : Promise.race([serviceStopped, new Promise((resolve) => setTimeout(resolve, serviceStopMs))]));
    await stack?.stop();
    // The spans of the last requests, still batched.
    await activeTracing()
      ?.shutdown()
      .catch(() => undefined);
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void shutdown('SIGINT', 0));
  process.on('SIGTERM', () => void shutdown('SIGTERM', 0));
  /**
   * A server that dies under the service ends the process with status 1, rather than being
   * restarted here: /readyz would stay 503 with it gone, a supervisor (systemd, a container
   * runtime, a developer at the terminal) already knows how to restart a process and how often,
   * and a fresh start brings both servers and the service's connections back in a known state.
   */
  const serverDied = (server: ManagedProcess, exit: ExitStatus) => {
    logger.error(
      { server: server.name, ...exit, log: server.logFile, logTail: server.logTail() },
      `the embedded ${server.name} exited; stopping with status 1, for a supervisor to start the service again`,
    );
    void shutdown(`${server.name} exited`, 1, CRASH_SERVICE_STOP_MS);
  };

  let endpoints: Endpoints;
  if (options.embedded) {
    stack = await startEmbeddedStack(config, logger, {
      collections: SERVICE_COLLECTIONS.map(({ name }) => name),
      onServerExit: serverDied,
    });
    endpoints = stack;
  } else if (config.temporalAddress && config.mongoUri) {
    endpoints = { temporalAddress: config.temporalAddress, mongoUri: config.mongoUri };
  } else {
    process.stderr.write(
      'TEMPORAL_ADDRESS and MONGODB_URI must be set (or use `npm start`, which runs both servers itself)\n',
    );
    process.exit(2);
  }

  service = await startService(config, endpoints, logger, options).catch(async (error) => {
    await stack?.stop();
    throw error;
  });

  if (service.url) {
    const lines = [
      `Agent coordination service is up.`,
      `  API:             ${service.url}`,
      `  Web app:         ${service.url}/app/`,
      ...(endpoints.temporalUiUrl ? [`  Temporal Web UI: ${endpoints.temporalUiUrl}`] : []),
      ...(options.embedded
        ? [
            `  Admin API key:   ${config.adminApiKey}`,
            `  Callback secret: ${config.callbackSigningSecret}`,
            `  Data folder:     ${config.dataDir}`,
            `Try it (README.md, "Five minutes with the service"):`,
            `  export ACS_URL=${service.url} ADMIN_KEY=${config.adminApiKey}`,
          ]
        : []),
      `Ctrl-C stops everything this process started.`,
    ];
    process.stdout.write(`\n${lines.join('\n')}\n\n`);
  }
}

/**
 * How long the API and the worker get to stop after a server died under them. With MongoDB or
 * Temporal gone, work in flight cannot be recorded anyway, and the drivers' own timeouts (30 s to
 * select a MongoDB server) would only delay the restart.
 */
const CRASH_SERVICE_STOP_MS = 10_000;

/**
 * npm start generates the admin key, the callback signing secret and the secrets key once and keeps
 * them with the data, so a restart keeps working credentials, receivers keep verifying signatures
 * and the stored signing secrets keep opening.
 */
export function persistentSecret(dataDir: string, fileName: string, generate: () => string): string {
  ensurePrivateDir(dataDir);
  const file = path.join(dataDir, fileName);
  try {
    const secret = fs.readFileSync(file, 'utf8').trim();
    // A file put there by hand, or copied in, may be readable by others.
    fs.chmodSync(file, PRIVATE_FILE_MODE);
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const secret = generate();
    fs.writeFileSync(file, `${secret}\n`, { mode: PRIVATE_FILE_MODE });
    return secret;
  }
}

export function runMain(options: MainOptions): void {
  main(options).catch((error: unknown) => {
    // A taken port is the operator's to fix, and its message says how: its stack would only hide it.
    const report = error instanceof PortTakenError ? error.message : ((error as Error).stack ?? String(error));
    process.stderr.write(`Start-up failed: ${report}\n`);
    process.exit(1);
  });
}
