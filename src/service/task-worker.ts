import {
  Worker,
  type ActivityInterceptorsFactory,
  type NativeConnection,
  type WorkerOptions,
} from '@temporalio/worker';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import { activeTracing } from '../ops/tracing';
import type { Config } from '../config/config';
import type { Logger } from '../ops/logger';
import { activityLogContext } from './activity-log-context';
import { createActivities, type ActivityDeps } from '../../activities';

export interface RunningWorker {
  stop(): Promise<void>;
}

type WorkerConfig = Pick<Config, 'temporalNamespace' | 'taskQueue'>;

/**
 * Workflow task slots of a worker. An eager start hands the new workflow's first task to this
 * worker only while a slot is free; with the default 40, a busy worker has none, the start falls back
 * to the task queue, and new workflows wait there behind the rest (bench/tasks at 50 concurrent
 * tasks: p99 8 to 9 s; with 200 slots 2 s, and a third more throughput). A slot only holds a task:
 * the workflow thread still runs one activation at a time.
 */
export const WORKFLOW_TASK_SLOTS = 1000;

/**
 * Activity slots: agent calls in flight, callbacks and notices. A call mostly waits on the network.
 * With 100 (the default), 250 calls to an agent answering in 8 s took three rounds of 8 s, and a
 * quick task sent among them waited for a slot.
 */
const ACTIVITY_SLOTS = 1000;

/** Local activity slots: the bookkeeping (task store writes, params checks), and the agent calls of runs started before they became regular activities. */
const LOCAL_ACTIVITY_SLOTS = 1000;

/**
 * Activities a worker may take at once with the workflow task that schedules them, rather than
 * through the task queue (eager execution, where the server allows it, as the embedded dev server
 * does). The SDK's default, 3, starts three calls of a composition's level of ten at once and sends
 * the rest through the queue: bench/compositions/dag.ts's 10 × 10 DAG took a median 2 960 to
 * 3 603 ms with 3, and 2 684 to 2 715 ms with 20 (docs/benchmarks.md). The calls are the same
 * activities either way, in the Web UI and in their retries.
 */
const EAGER_ACTIVITY_RESERVATIONS = 20;

/**
 * Longest wait between two heartbeats a call sends to the server (the SDK's default: 80 % of the
 * heartbeat timeout). A heartbeat's answer is how a call in flight hears that its task was
 * cancelled or reported on, so this bounds how long the call goes on after that.
 */
const HEARTBEAT_THROTTLE = '1 second';

/**
 * With tracing on, the workers' part of a task's trace: activity spans under their workflow's,
 * workflow spans (exported through a sink, as workflow code cannot reach the network) under the
 * client's start. With tracing off, nothing.
 */
function tracingParts(hasWorkflows: boolean): {
  activity: ActivityInterceptorsFactory[];
  workflowModules: string[];
  sinks?: WorkerOptions['sinks'];
} {
  const tracing = activeTracing();
  if (!tracing) return { activity: [], workflowModules: [] };
  const activity: ActivityInterceptorsFactory = (ctx) => ({
    inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
    outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
  });
  if (!hasWorkflows) return { activity: [activity], workflowModules: [] };
  return {
    activity: [activity],
    workflowModules: [require.resolve('../../workflows/tracing-interceptors')],
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}

/**
 * Polls the task queue with the workflows in `workflows/` and the activities in `activities/`. What
 * the activities keep for the worker's lifetime (MCP sessions) ends once the worker stopped running
 * them, however it stops.
 */
export async function startTaskWorker(
  config: WorkerConfig,
  connection: NativeConnection,
  deps: ActivityDeps,
): Promise<RunningWorker> {
  const { activities, close } = createActivities(deps);
  const worker = await startWorker(config, connection, deps.logger, {
    activities,
    workflowsPath: require.resolve('../../workflows'),
  }).catch(async (error: unknown) => {
    await close();
    throw error;
  });
  return {
    async stop() {
      try {
        await worker.stop();
      } finally {
        await close();
      }
    },
  };
}

/** A worker on `config.taskQueue` over the process's connection (TemporalHandle): activities only, unless given the workflows. */
export async function startWorker(
  config: WorkerConfig,
  connection: NativeConnection,
  logger: Logger,
  { activities, workflowsPath }: { activities: object; workflowsPath?: string },
): Promise<RunningWorker> {
  const traced = tracingParts(workflowsPath !== undefined);
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    ...(workflowsPath === undefined ? {} : { workflowsPath }),
    activities,
    maxConcurrentWorkflowTaskExecutions: WORKFLOW_TASK_SLOTS,
    maxConcurrentActivityTaskExecutions: ACTIVITY_SLOTS,
    maxConcurrentLocalActivityExecutions: LOCAL_ACTIVITY_SLOTS,
    maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
    maxEagerActivityReservationsPerWorkflowTask: EAGER_ACTIVITY_RESERVATIONS,
    interceptors: { activity: [activityLogContext(), ...traced.activity], workflowModules: traced.workflowModules },
    ...(traced.sinks ? { sinks: traced.sinks } : {}),
  });
  const running = worker.run();
  logger.info({ taskQueue: config.taskQueue }, 'worker polling');
  return {
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}
