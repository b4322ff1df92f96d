import { Context } from '@temporalio/activity';

/** How often a heartbeating activity heartbeats by default: well inside the map's heartbeat timeout (workflows/activity-stubs.ts). */
const HEARTBEAT_MS = 1_000;

/**
 * The activity, heartbeating while it runs: a worker that dies mid-way is noticed within the
 * activity's heartbeat timeout, and the activity retried elsewhere, rather than after its whole
 * start-to-close timeout.
 */
export function heartbeating<A extends unknown[], R>(
  activity: (...args: A) => Promise<R>,
  everyMs = HEARTBEAT_MS,
): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    const context = Context.current();
    const heartbeats = setInterval(() => context.heartbeat(), everyMs);
    try {
      return await activity(...args);
    } finally {
      clearInterval(heartbeats);
    }
  };
}
