import { ensurePrivateDir } from './data-dir';
import type { Config } from '../config/config';
import type { Logger } from '../ops/logger';
import { startFerretDb, mongoUriFor } from './ferretdb';
import { serversEndWithThisProcess, type ExitStatus, type ManagedProcess, type PortClaim } from './managed-process';
import { ensureFerretDb, ensureTemporalCli } from './provision';
import { startTemporalDevServer, temporalAddress } from './temporal-dev-server';
import { StoreGate } from '../store/store-gate';

/** Where the service's dependencies are, whether this process started them or they were given. */
export interface Endpoints {
  temporalAddress: string;
  mongoUri: string;
  /** Set when this process runs the Temporal dev server with its Web UI. */
  temporalUiUrl?: string;
  /** Set when this process runs FerretDB: the service's store passes its calls through it (src/store/store-gate.ts). */
  storeGate?: StoreGate;
}

export interface EmbeddedStack extends Endpoints {
  processes: ManagedProcess[];
  stop(): Promise<void>;
}

/** The ports of the servers startEmbeddedStack would start, for ensurePortsFree. */
export function embeddedPorts(config: Config): PortClaim[] {
  const host = '127.0.0.1';
  return [
    ...(config.temporalAddress
      ? []
      : [
          {
            variable: 'EMBEDDED_TEMPORAL_PORT',
            host,
            port: config.embeddedTemporalPort,
            user: 'the embedded Temporal dev server',
          },
          {
            variable: 'EMBEDDED_TEMPORAL_UI_PORT',
            host,
            port: config.embeddedTemporalUiPort,
            user: "the embedded Temporal dev server's Web UI",
          },
        ]),
    ...(config.mongoUri
      ? []
      : [{ variable: 'EMBEDDED_MONGODB_PORT', host, port: config.embeddedMongoPort, user: 'the embedded FerretDB' }]),
  ];
}

export interface EmbeddedStackOptions {
  collections: readonly string[];
  /** Told when a server exits without being stopped; the stack does not restart it. */
  onServerExit: (server: ManagedProcess, exit: ExitStatus) => void;
}

/**
 * Starts what the configuration does not point at: the Temporal dev server unless TEMPORAL_ADDRESS
 * is set, FerretDB unless MONGODB_URI is set. Data lives under DATA_DIR, so a restart keeps it.
 */
export async function startEmbeddedStack(
  config: Config,
  logger: Logger,
  options: EmbeddedStackOptions,
): Promise<EmbeddedStack> {
  ensurePrivateDir(config.dataDir);
  if (!serversEndWithThisProcess())
    logger.warn('setpriv --pdeathsig is not available: the embedded servers keep running if this process is killed');
  const processes: ManagedProcess[] = [];
  const started = (server: ManagedProcess) => {
    processes.push(server);
    server.onUnexpectedExit((exit) => options.onServerExit(server, exit));
  };
  const stop = async () => {
    await Promise.all(processes.map((process) => process.stop()));
  };
  try {
    // Install what is missing before starting anything, so a failed install leaves nothing running.
    const say = (message: string) => logger.info(message);
    const temporalBinary = config.temporalAddress ? undefined : ensureTemporalCli(config.cacheDir, say);
    const ferretDbBinary = config.mongoUri ? undefined : ensureFerretDb(config.cacheDir, say);

    let temporal = config.temporalAddress;
    let temporalUiUrl: string | undefined;
    if (temporalBinary) {
      const uiPort = config.embeddedTemporalUiPort;
      logger.info({ port: config.embeddedTemporalPort, uiPort }, 'starting the embedded Temporal dev server');
      started(
        await startTemporalDevServer({
          binary: temporalBinary,
          dataDir: config.dataDir,
          port: config.embeddedTemporalPort,
          uiPort,
          namespace: config.temporalNamespace,
        }),
      );
      temporal = temporalAddress(config.embeddedTemporalPort);
      temporalUiUrl = `http://127.0.0.1:${uiPort}`;
    }
    let mongoUri = config.mongoUri;
    let storeGate: StoreGate | undefined;
    if (ferretDbBinary) {
      storeGate = new StoreGate();
      logger.info({ port: config.embeddedMongoPort }, 'starting the embedded FerretDB');
      started(
        await startFerretDb({
          binary: ferretDbBinary,
          dataDir: config.dataDir,
          port: config.embeddedMongoPort,
          schema: { database: config.mongoDatabase, collections: options.collections },
          warn: (message) => logger.warn(message),
          writeAheadLogs: { gate: storeGate },
        }),
      );
      mongoUri = mongoUriFor(config.embeddedMongoPort);
    }
    return { temporalAddress: temporal!, mongoUri: mongoUri!, temporalUiUrl, storeGate, processes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
