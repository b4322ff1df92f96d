// How the composition workflow reaches its activities: each kind of work with the timeouts and
// retries it needs. Their contract is activity-contract.ts and room-delivery-contract.ts.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { TaskActivities } from './activity-contract';
import type { MapActivities } from './map-contract';
import type { RoomDeliveryActivities } from './room-delivery-contract';

/**
 * Index writes and schema checks: short, run by the worker within the workflow task (no round trip
 * through the server of their own), and retried until MongoDB answers again.
 */
export const bookkeepingOptions = {
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
} as const;
export const bookkeeping = proxyLocalActivities<TaskActivities>(bookkeepingOptions);

/**
 * The agent call: a regular activity, so that Pending Activities in the Web UI shows it with its
 * attempt, last failure and next retry. Its timeouts and retry policy are the task's own, given at
 * the call site.
 */
export const agentCalls = proxyActivities<TaskActivities>(bookkeepingOptions);

/** Margin of the call activity's own timeout over the HTTP call's, for loading the agent and recording. */
export const CALL_ACTIVITY_MARGIN_MS = 10_000;

/**
 * A call heartbeats every second while it waits for the agent (activities/call-agent.ts): a worker
 * that died mid-call is noticed after this long, and the call is made again elsewhere, instead of
 * after the whole call timeout.
 */
export const CALL_HEARTBEAT_TIMEOUT = '10 seconds';

/** Telling an agent of a cancellation: a few quick tries, then the task is cancelled all the same. */
export const notificationOptions = {
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, initialInterval: '1 second', backoffCoefficient: 2 },
} as const;
export const notifications = proxyActivities<TaskActivities>(notificationOptions);

/** Completion callbacks: retried with backoff for about ten minutes, then given up (the task's outcome stands). */
export const callbackOptions = {
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 12, initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '2 minutes' },
} as const;
export const callbacks = proxyActivities<TaskActivities>(callbackOptions);

/**
 * The answer to an agent's input request: retried for about half a minute, then the task fails
 * with the last error (the agent cannot go on without it).
 */
export const inputDeliveryOptions = {
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5, initialInterval: '1 second', backoffCoefficient: 2 },
} as const;
export const inputDeliveries = proxyActivities<TaskActivities>(inputDeliveryOptions);

/**
 * Work on the room sockets of one API process, on that process's own queue. A process that died
 * leaves its queue unpolled: the schedule-to-close bound ends the wait and HTTP takes over.
 */
export const roomDeliveryOptions = {
  scheduleToCloseTimeout: '5 seconds',
  retry: { maximumAttempts: 2, initialInterval: '200 milliseconds' },
} as const;
export const roomDeliveryAt = (taskQueue: string) =>
  proxyActivities<RoomDeliveryActivities>({ ...roomDeliveryOptions, taskQueue });

/**
 * A map's reads and writes of many records at once (its array, a chunk's items, its slices): regular
 * activities, retried until MongoDB answers again. They heartbeat (activities/heartbeats.ts), so a
 * worker that died in one is noticed after the heartbeat timeout, not the whole start-to-close one,
 * during which its chunk, and the lane behind it, would stand still.
 */
export const mapWorkOptions = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
} as const;
export const mapWork = proxyActivities<MapActivities>(mapWorkOptions);
/** A map's one-document writes: its counts on its task. */
export const mapBookkeeping = proxyLocalActivities<MapActivities>(bookkeepingOptions);
