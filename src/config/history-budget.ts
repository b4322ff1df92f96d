// How many tasks one composition may hold: its workflow's history must stay well inside what
// Temporal allows one run. Measured by bench/history/run.ts; the figures are in docs/benchmarks.md.

/**
 * History events of the costliest task this service runs, measured as the slope between compositions
 * of 10 and 50: a dependant whose param is a pending argument, answered 202 then reported, with a
 * callback of its own and one to its agent (23.6), plus the cancellation notice a cancelled one gets
 * (3: its activity's scheduled, started and closed events). An agent's retries add none.
 */
export const WORST_EVENTS_PER_TASK = 27;

/**
 * Temporal's default `limit.historyCount.warn`: past it the server logs warnings for the run; at
 * five times as many (`limit.historyCount.error`, 51 200) it terminates it.
 */
export const HISTORY_EVENT_BUDGET = 10_240;

/**
 * The largest MAX_COMPOSITION_SIZE allowed (379). The bytes stay far inside their own limits then:
 * 6.1 KB per task beside its params (2.3 MB for 379 tasks), plus the request body (at most
 * MAX_BODY_BYTES) twice, in the workflow's input and in the calls' inputs, against Temporal's
 * 10 MB warning and 50 MB limit; what is left is the results that travel through the history
 * (reports, and those a pending argument reads), which docs/tasks.md, "Tasks and compositions", names.
 */
export const MAX_COMPOSITION_SIZE_LIMIT = Math.floor(HISTORY_EVENT_BUDGET / WORST_EVENTS_PER_TASK);
