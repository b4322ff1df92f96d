import type { Config } from '../src/config/config';
import type { Logger } from '../src/ops/logger';
import type { Metrics } from '../src/ops/metrics';
import type { RecentAgents } from '../src/registry/recent-agents';
import type { SchemaChecks } from '../src/user-schemas/schema-checks';
import { outboundDispatcher } from '../src/agent-calls/outbound-guard';
import { McpSessionPool } from '../src/agent-calls/mcp-session-pool';
import { TaskClaims } from '../src/tasks/task-claims';
import type { TaskChanges } from '../src/tasks/task-changes';
import { TaskStore } from '../src/tasks/task-store';
import type { Store } from '../src/store/mongo';
import { PresenceLookup } from '../src/room-tasks/socket-presence';
import { callAgentActivity } from './call-agent';
import { checkConditionActivity } from './check-condition';
import { findRoomSocketsActivities } from './find-room-sockets';
import { deliverCallbackActivity } from './deliver-callback';
import { deliverTaskInputActivity } from './deliver-task-input';
import { notifyCancellationActivity } from './notify-cancellation';
import { pollMcpTaskActivity } from './poll-mcp-task';
import { pollA2aTaskActivity } from './poll-a2a-task';
import { recordTaskActivity } from './record-task';
import { validateParamsActivity } from './validate-params';
import { openMapActivity } from './open-map';
import { recordMapProgressActivity } from './map-progress';
import { closeMapActivity } from './close-map';
import { openChunkActivity } from './open-chunk';
import { endQueuedActivity } from './end-queued';
import { heartbeating } from './heartbeats';
import { closeChunkActivity } from './close-chunk';
import { MapSources } from '../src/maps/map-source';
import { MapSlices } from '../src/maps/map-slices';
import type { TaskActivities } from '../workflows/activity-contract';
import type { MapActivities } from '../workflows/map-contract';
import type { ScheduleActivities } from '../workflows/schedule-contract';
import { ApiKeyStore } from '../src/auth/api-keys';
import { ScheduleStore } from '../src/schedules/schedule-store';
import { IdempotencyKeys } from '../src/tasks/idempotency-keys';
import { TaskLauncher } from '../src/tasks/task-launcher';
import type { TemporalHandle } from '../src/tasks/temporal-client';
import { awaitLaunchedWorkActivity } from './await-launched-work';
import { launchScheduledRunActivity } from './launch-scheduled-run';

/** What activities need from the process that hosts the worker. */
export interface ActivityDeps {
  config: Config;
  store: Store;
  logger: Logger;
  /** The process's metrics (src/ops/metrics.ts), which its /metrics serves. */
  metrics: Metrics;
  /** Lookups waiting in this process hear of the task store writes made here. */
  taskChanges: TaskChanges;
  /** The process's agent reads, shared with the API so its changes apply here at once. */
  agents: RecentAgents;
  /** The process's schema checks, off its event loop (src/user-schemas/check-pool.ts). */
  schemas: SchemaChecks;
  /** The process's Temporal client: scheduled runs start their work and wait for it to end. */
  temporal: Pick<TemporalHandle, 'client'>;
}

/**
 * Every activity the task worker registers, as the workflow's contract declares them
 * (workflows/activity-contract.ts); each lives in its own file beside this one (room-delivery.ts holds
 * those of an API process's own delivery queue, registered by src/service/room-delivery-worker.ts).
 * `close` ends what they keep for the worker's lifetime (the MCP sessions): called once the worker
 * stopped running them.
 */
export function createActivities(deps: ActivityDeps) {
  const { agents } = deps;
  const taskStore = new TaskStore(deps.store, deps.taskChanges, deps.metrics);
  const claims = new TaskClaims(deps.store);
  const dispatcher = outboundDispatcher({
    allowPrivate: deps.config.allowPrivateAgentUrls,
    connectTimeoutMs: deps.config.agentCallTimeoutMs,
  });
  // A call and a poll of the agent's own task are bounded alike.
  const calls = {
    callTimeoutMs: deps.config.agentCallTimeoutMs,
    maxReplyBytes: deps.config.maxBodyBytes,
    ...(deps.config.publicUrl && deps.config.secretsKey
      ? {
          a2aPush: {
            publicUrl: deps.config.publicUrl,
            keys: [deps.config.secretsKey, ...deps.config.secretsKeysPrevious],
          },
        }
      : {}),
  };
  // MCP sessions, one per agent version, kept between calls (docs/benchmarks.md, "Tasks over MCP"). A
  // session ends when its agent is deleted or registered anew (RecentAgents reads the store at most
  // once a second), when idle, and when the worker stops.
  const mcpSessions = new McpSessionPool({
    dispatcher,
    timeoutMs: calls.callTimeoutMs,
    maxReplyBytes: calls.maxReplyBytes,
    idleMs: deps.config.mcpSessionIdleMs,
    isCurrent: async (agentId, version) => (await agents.findById(agentId))?.version === version,
  });
  const activities = {
    callAgent: callAgentActivity(agents, taskStore, claims, deps.schemas, dispatcher, mcpSessions, calls, deps.metrics),
    pollMcpTask: pollMcpTaskActivity(agents, taskStore, claims, deps.schemas, dispatcher, calls),
    pollA2aTask: pollA2aTaskActivity(agents, taskStore, claims, dispatcher, calls),
    notifyCancellation: notifyCancellationActivity(agents, dispatcher, {
      callTimeoutMs: deps.config.agentCallTimeoutMs,
    }),
    deliverCallback: deliverCallbackActivity(
      agents,
      taskStore,
      dispatcher,
      { callbackSigningSecret: deps.config.callbackSigningSecret, callTimeoutMs: deps.config.agentCallTimeoutMs },
      deps.metrics,
    ),
    deliverTaskInput: deliverTaskInputActivity(agents, claims, dispatcher, {
      callTimeoutMs: deps.config.agentCallTimeoutMs,
    }),
    validateParams: validateParamsActivity(agents, deps.schemas),
    checkCondition: checkConditionActivity(deps.schemas),
    recordTask: recordTaskActivity(taskStore),
    ...findRoomSocketsActivities(new PresenceLookup(deps.store), agents),
    ...mapActivities(deps, taskStore),
    ...scheduleActivities(deps, taskStore),
  } satisfies TaskActivities & MapActivities & ScheduleActivities;
  return { activities, close: () => mcpSessions.close() };
}

/** A map's reads and writes: its array (kept parsed by this worker), its items, its slices. */
function mapActivities(deps: ActivityDeps, taskStore: TaskStore): MapActivities {
  const sources = new MapSources(taskStore);
  const slices = new MapSlices(deps.store);
  return {
    openMap: heartbeating(openMapActivity(taskStore, sources, deps.config.maxMapItems)),
    // A local activity: heartbeats are for regular ones.
    recordMapProgress: recordMapProgressActivity(taskStore),
    closeMap: heartbeating(closeMapActivity(taskStore, slices)),
    openChunk: heartbeating(openChunkActivity(taskStore, sources, deps.agents, deps.schemas)),
    endQueued: heartbeating(endQueuedActivity(taskStore)),
    closeChunk: heartbeating(closeChunkActivity(taskStore, slices)),
  };
}

/** A scheduled run's launch, made as the API makes one (src/tasks/task-launcher.ts), and its wait for the work. */
function scheduleActivities(deps: ActivityDeps, taskStore: TaskStore): ScheduleActivities {
  const launcher = new TaskLauncher({
    agents: deps.agents,
    taskStore,
    temporal: deps.temporal,
    schemas: deps.schemas,
    config: deps.config,
    logger: deps.logger.child({ component: 'schedules' }),
  });
  return {
    launchScheduledRun: launchScheduledRunActivity(
      launcher,
      new IdempotencyKeys(deps.store, deps.metrics.tasks.idempotencyHits),
      new ScheduleStore(deps.store),
      { apiKeys: new ApiKeyStore(deps.store, undefined), agents: deps.agents },
    ),
    awaitLaunchedWork: awaitLaunchedWorkActivity(deps.temporal),
  };
}
