import { McpTaskRecords } from './mcp-server/mcp-task-records';
import { McpSessions } from './mcp-server/server-sessions';
import { VirtualServers } from './mcp-server/virtual-servers';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Router from '@koa/router';
import { ApiKeyStore } from './auth/api-keys';
import { Authenticator } from './auth/authenticate';
import { HumanTokenVerifier } from './auth/human-tokens';
import { secretBoxOf } from './auth/secret-box';
import type { Config } from './config/config';
import type { Endpoints } from './embedded/stack';
import { answerClientErrors } from './http/client-errors';
import { apiModules } from './service/api-modules';
import { createApp } from './service/app';
import { closeServer, listen } from './http/listen';
import { capConnectionsPerAddress } from './limits/connection-cap';
import { createLimits } from './limits/limits';
import { MIGRATIONS } from './migrations';
import { runMigrations } from './migrations/migration';
import { createOpsRoutes } from './service/ops-routes';
import { createWebAppRoutes } from './web-app/routes';
import { serveOps } from './service/ops-server';
import { openApiDocument } from './service/openapi';
import { AgentStore } from './registry/agent-store';
import { RecentAgents } from './registry/recent-agents';
import { AgentDirectory } from './registry/agent-directory';
import { CheckPool } from './user-schemas/check-pool';
import type { SchemaChecks } from './user-schemas/schema-checks';
import type { Logger } from './ops/logger';
import { createMetrics, type Metrics } from './ops/metrics';
import { TaskEventFeeds } from './task-events/event-feeds';
import { TaskEventStore } from './task-events/event-store';
import { TaskChanges } from './tasks/task-changes';
import { watchEndedRuns } from './tasks/ended-runs';
import { TaskClaims } from './tasks/task-claims';
import { TaskStore } from './tasks/task-store';
import { TaskWaits } from './tasks/task-waits';
import { TaskLauncher } from './tasks/task-launcher';
import { IdempotencyKeys } from './tasks/idempotency-keys';
import { startTaskWorker, type RunningWorker } from './service/task-worker';
import { connectTemporal, temporalErrors, type TemporalHandle } from './tasks/temporal-client';
import { createRooms } from './rooms/rooms';
import { RoomStore } from './rooms/room-store';
import { startRoomDelivery } from './service/room-delivery-worker';
import { RoomTaskRequests } from './room-tasks/room-task-requests';
import { PresenceLookup } from './room-tasks/socket-presence';
import { Store } from './store/mongo';
import { Schedules } from './schedules/schedules';
import { ScheduleStore } from './schedules/schedule-store';
import { SERVICE_COLLECTIONS } from './service/collections';

export interface ServiceOptions {
  /** Serve the HTTP API and WebSocket on config.port. */
  api: boolean;
  /** Run a Temporal worker for the task queue in this process. */
  worker: boolean;
}

export interface RunningService {
  /** The API's base URL, when this process serves it. */
  url?: string;
  stop(): Promise<void>;
}

/** Connects to MongoDB and Temporal and starts the parts of the service `options` asks for. */
export async function startService(
  config: Config,
  endpoints: Endpoints,
  logger: Logger,
  options: ServiceOptions,
): Promise<RunningService> {
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse())
      await stop().catch((error) => logger.error({ err: error }, 'error during shutdown'));
  };
  try {
    const store = await Store.connect(endpoints.mongoUri, config.mongoDatabase, endpoints.storeGate);
    stops.push(() => store.close());
    for (const { name, indexes } of SERVICE_COLLECTIONS) await store.ensureIndexes(name, indexes);
    await runMigrations(store, MIGRATIONS, logger);

    const temporal = await connectTemporal({ ...config, temporalAddress: endpoints.temporalAddress }, logger);
    stops.push(() => temporal.close());

    const metrics = createMetrics({ perAgent: config.metricsPerAgent });
    // With the worker in this process, a waiting GET /tasks/{taskId} answers as soon as the task ends.
    const taskChanges = new TaskChanges({ workerInProcess: options.worker });
    // One store for the registry's writes, so the agent reads of tasks hear of them.
    const agents = new AgentStore(store, secretBoxOf(config));
    const secrets = await agents.sealStoredSecrets();
    if (secrets.sealed > 0 || secrets.leftBusy > 0)
      logger.info(secrets, 'sealed the signing secrets stored in plaintext or under a previous SECRETS_KEY');
    // Agents' schemas are compiled and checked off the event loop, for the API and the worker alike.
    const schemas = new CheckPool(config.schemaChecks);
    stops.push(() => schemas.close());
    const shared: SharedInProcess = {
      schemas,
      metrics,
      taskStore: new TaskStore(store, taskChanges, metrics),
      taskChanges,
      agents,
      recentAgents: new RecentAgents(agents),
    };
    let worker: RunningWorker | undefined;
    if (options.worker) {
      worker = await startTaskWorker(config, temporal.connection, {
        config,
        store,
        taskChanges,
        agents: shared.recentAgents,
        logger: logger.child({ component: 'worker' }),
        metrics,
        schemas,
        temporal,
      });
      stops.push(() => worker!.stop());
      const endedRuns = watchEndedRuns({
        temporal,
        taskStore: shared.taskStore,
        logger: logger.child({ component: 'ended-runs' }),
        intervalMs: config.endedRunsCheckMs,
      });
      stops.push(() => endedRuns.stop());
    }

    const opsRouter = createOpsRoutes(
      [
        { name: 'mongodb', check: () => store.ping() },
        { name: 'temporal', check: () => temporal.ping() },
      ],
      metrics,
      { document: openApiDocument(), metricsToken: config.metricsToken, temporalMetrics: temporal.metrics },
    );
    let url: string | undefined;
    if (options.api) {
      const webAppRouter = createWebAppRoutes({
        temporalUiUrl: config.temporalUiUrl ?? endpoints.temporalUiUrl,
        temporalNamespace: config.temporalNamespace,
      });
      const server = await serveApi(config, store, temporal, logger, stops, shared, { opsRouter, webAppRouter });
      const { port } = server.address() as AddressInfo;
      url = `http://${config.host}:${port}`;
      logger.info({ url }, 'API listening');
    } else {
      const ops = await serveOps(opsRouter, { host: config.host, port: config.metricsPort }, { logger, metrics });
      stops.push(() => ops.close());
      logger.info({ url: `${ops.url}/metrics` }, 'metrics served');
    }
    return { url, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** What the API and the worker of one process share. */
interface SharedInProcess {
  /** Checks of data against agents' schemas, on threads of their own. */
  schemas: SchemaChecks;
  /** One registry per process: GET /metrics serves what the API and the worker record. */
  metrics: Metrics;
  /** Tasks and compositions; its writes wake the lookups waiting in this process (TaskChanges). */
  taskStore: TaskStore;
  /** What the task store of this process wrote: waiting lookups and event streams hear of it. */
  taskChanges: TaskChanges;
  agents: AgentStore;
  recentAgents: RecentAgents;
}

/** Serves the API; each part it starts puts its shutdown step in `stops` as soon as it runs. */
async function serveApi(
  config: Config,
  store: Store,
  temporal: TemporalHandle,
  logger: Logger,
  stops: Array<() => Promise<void>>,
  { metrics, taskStore, taskChanges, agents, recentAgents, schemas }: SharedInProcess,
  { opsRouter, webAppRouter }: { opsRouter: Router; webAppRouter: Router },
): Promise<http.Server> {
  const limits = createLimits(config.limits, logger.child({ component: 'limits' }), metrics);
  const apiKeys = new ApiKeyStore(store, config.adminApiKey);
  const authenticator = new Authenticator(apiKeys, new HumanTokenVerifier(config), limits.authFailuresPerAddress);
  const directory = new AgentDirectory(agents);
  directory.warm();
  const launcher = new TaskLauncher({
    agents: recentAgents,
    taskStore,
    temporal,
    schemas,
    config,
    logger: logger.child({ component: 'tasks' }),
  });
  const roomStore = new RoomStore(store);
  const idempotencyKeys = new IdempotencyKeys(store, metrics.tasks.idempotencyHits);
  const eventStore = new TaskEventStore(store);
  const claims = new TaskClaims(store);
  const waits = new TaskWaits(taskStore, taskChanges);
  const roomTasks = new RoomTaskRequests({ launcher, taskStore, claims, temporal, agents, schemas, rooms: roomStore });
  const rooms = await createRooms(
    config,
    store,
    agents,
    authenticator,
    limits,
    logger.child({ component: 'rooms' }),
    metrics.rooms,
    roomTasks,
    [temporalErrors],
  );
  const delivery = await startRoomDelivery(config, {
    store,
    hub: rooms.hub,
    taskStore,
    claims,
    temporal,
    logger: logger.child({ component: 'room-delivery' }),
  });
  stops.push(() => delivery.stop());
  const inputs = { taskStore, claims, temporal, schemas, agents: recentAgents, rooms: roomStore };
  // One feed per log in this process, read by the task event streams and A2A's alike.
  const feeds = new TaskEventFeeds(
    taskStore,
    eventStore,
    taskChanges.logs,
    logger.child({ component: 'task-events' }),
    {
      endPolls: taskChanges.rereads,
    },
  );
  const streamsOpen = metrics.eventStreamsOpen;
  const modules = apiModules({
    config,
    agents,
    directory,
    apiKeys,
    schemas,
    launcher,
    taskStore,
    claims,
    waits,
    temporal,
    idempotencyKeys,
    inputs,
    feeds,
    eventStore,
    streamsOpen,
    roomRoutes: rooms.routes,
    roomStore,
    presence: new PresenceLookup(store),
    limits,
    // Read once the server listens (below): PORT 0 picks the port then.
    ownAddress: { host: config.host, port: () => (server.address() as AddressInfo | null)?.port },
    mcpSessions: new McpSessions(store),
    mcpTasks: new McpTaskRecords(store),
    mcpVirtualServers: new VirtualServers(store),
    schedules: new Schedules({
      store: new ScheduleStore(store),
      temporal,
      launcher,
      config,
      logger: logger.child({ component: 'schedules' }),
    }),
    logger,
  });
  const app = createApp({
    logger: logger.child({ component: 'http' }),
    metrics,
    maxBodyBytes: config.maxBodyBytes,
    authenticator,
    limits,
    opsRouter,
    webAppRouter,
    modules,
    errorMappers: [temporalErrors],
  });
  // Koa answers a failed request itself (ctx.onerror): the promise of its handler never rejects.
  const handleRequest = app.callback();
  const server = http.createServer(
    {
      // Slow clients that drip a request hold a connection each; these bound how long. A WebSocket
      // is no longer an HTTP request once upgraded, so neither limit applies to it.
      headersTimeout: config.httpHeadersTimeoutMs,
      requestTimeout: config.httpRequestTimeoutMs,
      // Node checks the two timeouts this often (30 s by default), so a check every second at most
      // keeps a connection from outliving its timeout by more than that.
      connectionsCheckingInterval: Math.min(1_000, config.httpHeadersTimeoutMs),
    },
    (request, response) => void handleRequest(request, response),
  );
  answerClientErrors(server);
  capConnectionsPerAddress(server, limits.connectionsPerAddress);
  // Agents hold connections open between calls; keep them a little longer than common client pools do.
  server.keepAliveTimeout = 65_000;
  rooms.attach(server);
  await listen(server, config.port, config.host);
  stops.push(() => closeServer(server));
  // Runs before closeServer: WebSocket connections are not the HTTP server's to close.
  stops.push(() => rooms.close());
  return server;
}
