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

/**
 * Most items in one chunk of a map (workflows/map-plan.ts): a chunk's workflow runs each item as a
 * composition runs a task, so 256 × WORST_EVENTS_PER_TASK (6 912) stays under HISTORY_EVENT_BUDGET.
 */
export const MAX_ITEMS_PER_CHUNK = 256;

/**
 * History events the map workflow spends on one chunk, estimated from what it schedules (not yet
 * measured): the child's initiated, started and completed events (3), the progress activity's
 * scheduled, started and completed (3), and two workflow tasks of three.
 */
export const MAP_EVENTS_PER_CHUNK = 12;

/**
 * The largest MAX_MAP_ITEMS allowed (218 368): as many chunks of MAX_ITEMS_PER_CHUNK as the map
 * workflow's history holds under HISTORY_EVENT_BUDGET. Smaller chunks (a map with a high
 * maxConcurrency, at most 4 × 100 of them) stay inside too: 400 × 12 = 4 800.
 */
export const MAX_MAP_ITEMS_LIMIT = Math.floor(HISTORY_EVENT_BUDGET / MAP_EVENTS_PER_CHUNK) * MAX_ITEMS_PER_CHUNK;
