import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { SkipReasonCode, TaskErrorCode } from '../../workflows/task-types';

/**
 * Every metric the service exports (docs/operations.md, "Metrics", lists them with what healthy
 * looks like). Label values are bounded: operations by what agents registered, statuses and error
 * codes by the service's own lists, agent ids only with METRICS_PER_AGENT=true.
 */
export interface MetricsOptions {
  /** METRICS_PER_AGENT: an `agent` label on the agent call, task end and report metrics. */
  perAgent: boolean;
}

/** Seconds, from a few milliseconds (an agent on the same network) to an hour (a long-running task's report). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
/** Seconds a person or a reader may take: up to a day. */
const WAIT_BUCKETS = [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600];
const COMPOSITION_SIZE_BUCKETS = [1, 2, 3, 5, 10, 20, 50, 100, 200, 500];
const LAG_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const KNOWN_ERROR_CODES = new Set<string>([...Object.values(TaskErrorCode), ...Object.values(SkipReasonCode)]);

/**
 * A task's error (or a skipped task's skipReason) as a label value: the service's own codes as they are; an agent's own codes, and
 * errors an agent reported without a code, as `OTHER`; no error as ''.
 */
export function errorCodeLabel(error: unknown): string {
  if (error === undefined) return '';
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  return typeof code === 'string' && KNOWN_ERROR_CODES.has(code) ? code : 'OTHER';
}

/** An HTTP status as a label value: its class (`2xx`…`5xx`). */
export const statusClassLabel = (status: number): string => `${Math.floor(status / 100)}xx`;

/** The process's Prometheus registry and every metric in it; each part takes the group it records. */
export function createMetrics(options: MetricsOptions = { perAgent: false }) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const agentLabels = (labels: string[]): string[] => (options.perAgent ? [...labels, 'agent'] : labels);
  const counter = (name: string, help: string, labelNames: readonly string[] = []) =>
    new Counter({ name, help, labelNames, registers });
  const gauge = (name: string, help: string) => new Gauge({ name, help, registers });
  const histogram = (name: string, help: string, labelNames: readonly string[], buckets: number[]) =>
    new Histogram({ name, help, labelNames, buckets, registers });

  const httpRequests = histogram(
    'http_request_duration_seconds',
    'HTTP requests by method, route and status',
    ['method', 'route', 'status'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  /** `{agent}` when METRICS_PER_AGENT asks for it, else nothing. */
  const agent = (agentId: string): { agent?: string } => (options.perAgent ? { agent: agentId } : {});

  return {
    registry,
    httpRequests,
    agent,
    rateLimited: counter('rate_limited_total', 'Requests, handshakes and connections refused by a limit, by limit', [
      'limit',
    ]),
    unavailable: counter('acs_unavailable_responses_total', 'HTTP answers 503, by reason', ['reason']),
    tasks: {
      created: counter(
        'acs_tasks_created_total',
        'Tasks created, by operation and kind (task, composition or item of a map)',
        ['operation', 'kind'],
      ),
      ended: counter(
        'acs_tasks_ended_total',
        'Tasks ended, by operation, status and error code (empty when none)',
        agentLabels(['operation', 'status', 'code']),
      ),
      compositionSize: histogram(
        'acs_composition_size',
        'Compositions created, by their number of tasks',
        [],
        COMPOSITION_SIZE_BUCKETS,
      ),
      reportWait: histogram(
        'acs_report_wait_seconds',
        "From an agent's 202 (or an MCP task's start) to the task's end, by outcome (status, or error code)",
        agentLabels(['operation', 'outcome']),
        DURATION_BUCKETS,
      ),
      inputRequests: counter('acs_input_requests_total', 'Input requests agents made, by operation', ['operation']),
      inputWait: histogram(
        'acs_input_wait_seconds',
        'From an input request to its answer, by operation',
        ['operation'],
        WAIT_BUCKETS,
      ),
      idempotencyHits: counter(
        'acs_idempotency_hits_total',
        'Requests with an Idempotency-Key seen before: answered as the first (replayed) or refused (conflict)',
        ['outcome'],
      ),
    },
    calls: {
      duration: histogram(
        'acs_agent_call_duration_seconds',
        'Calls to agents, by operation, protocol and outcome (HTTP status class, or error code)',
        agentLabels(['operation', 'protocol', 'outcome']),
        DURATION_BUCKETS,
      ),
      attempts: counter(
        'acs_agent_call_attempts_total',
        'Calls to agents, by operation and whether it was the first attempt or a retry',
        agentLabels(['operation', 'attempt']),
      ),
    },
    callbacks: counter(
      'acs_callback_deliveries_total',
      'Completion callbacks: delivered, retried (one attempt failed) or given up',
      ['outcome'],
    ),
    rooms: {
      socketsOpen: gauge('acs_room_sockets_open', 'Room WebSockets open on this process'),
      joins: counter('acs_room_joins_total', "Participants' first connection to a room on this process"),
      leaves: counter('acs_room_leaves_total', "Participants' last connection to a room on this process closed"),
      messagesStored: counter('acs_room_messages_stored_total', 'Room messages stored through this process'),
      deliveries: counter('acs_room_deliveries_total', 'Messages sent to room sockets of this process'),
      slowReadersCut: counter('acs_room_slow_readers_cut_total', 'Room sockets cut for reading too slowly'),
      fanoutLag: histogram(
        'acs_room_fanout_lag_seconds',
        'From a message stored through another process to its delivery here',
        [],
        LAG_BUCKETS,
      ),
    },
    eventStreamsOpen: gauge('acs_event_streams_open', 'Task event streams (server-sent events) open on this process'),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
export type TaskMetrics = Metrics['tasks'];
export type RoomMetrics = Metrics['rooms'];
