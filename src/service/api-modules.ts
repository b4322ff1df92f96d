import type { Gauge } from 'prom-client';
import { createDirectoryEndpoint } from '../a2a/directory-endpoint';
import { createA2aEndpoint } from '../a2a/endpoint';
import { createAgentCardRoutes } from '../a2a/routes';
import { createA2aPushRoutes } from '../a2a/push-routes';
import { outboundDispatcher } from '../agent-calls/outbound-guard';
import type { OwnAddress } from '../agent-calls/own-endpoint';
import type { ApiKeyStore } from '../auth/api-keys';
import { createKeyRoutes } from '../auth/key-routes';
import { createResourceMetadataRoutes } from '../auth/resource-metadata-routes';
import type { Config } from '../config/config';
import type { RouteModule } from '../http/route-module';
import type { AgentDirectory } from '../registry/agent-directory';
import type { AgentStore } from '../registry/agent-store';
import { createRegistryRoutes } from '../registry/routes';
import type { Limits } from '../limits/limits';
import { allowedOrigins } from '../mcp-server/allowed-origins';
import { createMcpEndpoint } from '../mcp-server/endpoint';
import type { McpTaskRecords } from '../mcp-server/mcp-task-records';
import type { McpSessions } from '../mcp-server/server-sessions';
import { createVirtualServerRoutes } from '../mcp-server/virtual-server-routes';
import type { VirtualServers } from '../mcp-server/virtual-servers';
import type { Logger } from '../ops/logger';
import { createPresenceRoutes } from '../room-tasks/presence-routes';
import type { PresenceLookup } from '../room-tasks/socket-presence';
import type { RoomStore } from '../rooms/room-store';
import type { SchemaChecks } from '../user-schemas/schema-checks';
import type { TaskEventFeeds } from '../task-events/event-feeds';
import type { TaskEventStore } from '../task-events/event-store';
import { createScheduleRoutes } from '../schedules/routes';
import type { Schedules } from '../schedules/schedules';
import { createTaskEventRoutes } from '../tasks/event-routes';
import type { IdempotencyKeys } from '../tasks/idempotency-keys';
import { createTaskRoutes } from '../tasks/routes';
import type { TaskClaims } from '../tasks/task-claims';
import type { TaskInputDeps } from '../tasks/task-inputs';
import type { TaskLauncher } from '../tasks/task-launcher';
import type { TaskStore } from '../tasks/task-store';
import type { TaskWaits } from '../tasks/task-waits';
import type { TemporalHandle } from '../tasks/temporal-client';
import { capabilityImporter } from './capability-importers';

/** The parts of one API process that its route modules are built from. */
export interface ApiParts {
  config: Config;
  agents: AgentStore;
  directory: AgentDirectory;
  apiKeys: ApiKeyStore;
  schemas: SchemaChecks;
  launcher: TaskLauncher;
  taskStore: TaskStore;
  claims: TaskClaims;
  waits: TaskWaits;
  temporal: TemporalHandle;
  idempotencyKeys: IdempotencyKeys;
  inputs: TaskInputDeps;
  feeds: TaskEventFeeds;
  eventStore: TaskEventStore;
  /** Counts the open event streams, the task events' and A2A's alike. */
  streamsOpen: Gauge;
  /** The rooms' routes, which the rooms build with their WebSocket. */
  roomRoutes: RouteModule;
  roomStore: RoomStore;
  presence: PresenceLookup;
  limits: Limits;
  /** Where this process's API listens: no agent's endpoint may lead back to it. */
  ownAddress: OwnAddress;
  mcpSessions: McpSessions;
  mcpTasks: McpTaskRecords;
  mcpVirtualServers: VirtualServers;
  schedules: Schedules;
  logger: Logger;
}

/**
 * Every route module the API mounts, in the order the app tries them. The OpenAPI test builds the
 * app from this same list, so a module mounted here and missing from the document fails it.
 */
export function apiModules({
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
  roomRoutes,
  roomStore,
  presence,
  limits,
  ownAddress,
  mcpSessions,
  mcpTasks,
  mcpVirtualServers,
  schedules,
  logger,
}: ApiParts): RouteModule[] {
  return [
    createRegistryRoutes({
      agents,
      directory,
      apiKeys,
      rules: { allowInsecureAgentUrls: config.allowInsecureAgentUrls, schemas, ownAddress },
      importCapabilities: capabilityImporter(
        {
          dispatcher: outboundDispatcher({
            allowPrivate: config.allowPrivateAgentUrls,
            connectTimeoutMs: config.agentCallTimeoutMs,
          }),
          timeoutMs: config.agentCallTimeoutMs,
          maxReplyBytes: config.maxBodyBytes,
        },
        schemas,
      ),
      refreshLimit: limits.capabilityRefreshesPerAgent,
    }),
    createKeyRoutes(apiKeys),
    createAgentCardRoutes(agents),
    createResourceMetadataRoutes(config),
    createDirectoryEndpoint({ directory }),
    createMcpEndpoint({
      directory,
      launcher,
      feeds,
      sessions: mcpSessions,
      mcpTasks,
      servers: mcpVirtualServers,
      mayCallFrom: allowedOrigins(config.mcpAllowedOrigins, config.publicUrl),
      inputs,
      cancellation: { taskStore, claims, temporal },
      taskStore,
      logger: logger.child({ component: 'mcp-server' }),
    }),
    createVirtualServerRoutes({ servers: mcpVirtualServers, agents, directory }),
    createA2aEndpoint({
      agents,
      launcher,
      taskStore,
      claims,
      waits,
      temporal,
      idempotencyKeys,
      inputs,
      feeds,
      streamsOpen,
    }),
    createTaskRoutes({
      launcher,
      taskStore,
      claims,
      waits,
      idempotencyKeys,
      temporal,
      maxCompositionSize: config.maxCompositionSize,
      inputs,
    }),
    createTaskEventRoutes({ taskStore, eventStore, feeds, streamsOpen }),
    createScheduleRoutes(schedules),
    createA2aPushRoutes({
      taskStore,
      temporal,
      keys: config.secretsKey ? [config.secretsKey, ...config.secretsKeysPrevious] : [],
      countAnonymous: (ctx) => limits.anonymousPerAddress.consume(limits.clientAddress(ctx.req)),
    }),
    roomRoutes,
    createPresenceRoutes({ rooms: roomStore, presence }),
  ];
}
