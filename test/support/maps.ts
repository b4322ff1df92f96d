import type { Db } from 'mongodb';
import { itemTaskId } from '../../workflows/task-types';
import { useAgentServer, type AgentBehaviour, type AgentServer, type ReceivedCall } from './agent-server';
import { registerAgent, type RegisteredAgent } from './agents';
import { gate } from './gate';
import { call } from './http';
import { tool, waitForTask } from './tasks';
import { STUCK_AFTER_MS, until } from './until';

/** An element of the arrays the maps of the tests run over: what the item agent does with it. */
export interface Element {
  n: number;
  /** `fail`: answer failed; `accept`: answer 202 (the test reports); absent: complete with `{n}`. */
  reply?: 'fail' | 'accept';
  /** Answer only once the test opened the gate of this name (`MapAgent.release`). */
  heldBy?: string;
}

/** `count` plain elements, numbered from 0: `{n: 0}`, `{n: 1}`… */
export const elements = (count: number): Element[] => Array.from({ length: count }, (_, n) => ({ n }));

/** A map's options beside its source. */
export interface MapOptions {
  maxConcurrency?: number;
  onItemFailure?: 'fail' | 'continue';
}

/** An item argument: the element, or its member at `field`. */
export const theItem = (field?: string) => ({ source: { item: true, ...(field === undefined ? {} : { field }) } });

/** The ids of a map's first `count` items. */
export const itemIdsOf = (mapTaskId: string, count: number): string[] =>
  Array.from({ length: count }, (_, index) => itemTaskId(mapTaskId, index));

/** waitForTask for an item that may not exist yet: its chunk creates it once the map started it. */
export async function waitForItem(itemId: string, options: Parameters<typeof waitForTask>[1] = {}): Promise<any> {
  await until(
    async () => (await call('GET', `/tasks/${itemId}`, { apiKey: 'admin' })).status === 200,
    `item ${itemId} created`,
  );
  return waitForTask(itemId, options);
}

/**
 * Jest's bound for a test of a map that takes minutes on a busy machine, beyond the suite's
 * testTimeout: waitForMap, not this, tells a map that is stuck.
 */
export const LONG_MAP_TEST_MS = 20 * 60_000;

/** Items of a map that ended, by the counts of its view. */
const endedItems = (view: any): number =>
  view.map === undefined ? 0 : view.map.completed + view.map.failed + view.map.cancelled;

/**
 * The view of a map once it ended. A large map takes minutes on a busy machine, so it is stuck only
 * when its counts stay still for STUCK_AFTER_MS; then its last view is returned, for the assertion.
 */
export async function waitForMap(mapTaskId: string, options: { baseUrl?: string } = {}): Promise<any> {
  let ended = -1;
  const live = (view: any) => view.status === 'pending' || view.status === 'input-required';
  // Bounded: each round sees at least one more item ended, or returns.
  for (;;) {
    const view = await waitForTask(mapTaskId, {
      ...options,
      timeoutMs: STUCK_AFTER_MS,
      until: (seen) => !live(seen) || endedItems(seen) > ended,
    });
    if (!live(view) || endedItems(view) <= ended) return view;
    ended = endedItems(view);
  }
}

/** How many of these tasks' records in the store have each status. */
export async function storedStatuses(db: Db, taskIds: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const records = db.collection<{ _id: string; status: string }>('tasks');
  for await (const { status } of records.find({ _id: { $in: taskIds } }, { projection: { status: 1 } }))
    counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/**
 * A registered agent with two tools: `list` completes with its params as its result (the parent a
 * map reads its array from), and `work` answers as the element in its `element` param says
 * (`Element`), which the map's items pass with `theItem()`.
 */
export interface MapAgent {
  agent: RegisteredAgent;
  server: AgentServer;
  /** `list`'s task with `params` as its result. */
  list: (params: Record<string, unknown>, extra?: Record<string, unknown>) => Record<string, unknown>;
  /** A map of `work` over the array at `field` of its parent `taskId`, each item given its element. */
  work: (
    taskId: string,
    field: string,
    options?: MapOptions,
    extra?: Record<string, unknown>,
  ) => Record<string, unknown>;
  /** The calls `work` got for this task (an item's id). */
  callsFor: (taskId: string) => ReceivedCall[];
  /** Lets the held calls of `name` answer. */
  release: (name: string) => void;
}

const ROUTE = 'map-agent';

/**
 * A map agent for the file's tests, on an agent server of the file's own, `work` answering after
 * `workMs`. Call the returned function inside tests.
 */
export function useMapAgent({ workMs = 0 }: { workMs?: number } = {}): () => MapAgent {
  const server = useAgentServer();
  const gates = new Map<string, ReturnType<typeof gate>>();
  const gateOf = (name: string) => {
    if (!gates.has(name)) gates.set(name, gate());
    return gates.get(name)!;
  };
  const answer: AgentBehaviour = (received) => {
    const { operation, params, cancel, input } = received.body ?? {};
    // A cancellation notice, or a person's answer delivered: the test reports what follows.
    if (cancel || input !== undefined) return { status: 200, body: {} };
    if (operation === 'tools/list') return { status: 200, body: { status: 'completed', result: params } };
    const element = params.element as Element;
    const heldUntil = element.heldBy === undefined ? undefined : gateOf(element.heldBy).opened;
    const timing = { heldUntil, delayMs: workMs };
    if (element.reply === 'accept') return { status: 202, body: { status: 'received' }, ...timing };
    if (element.reply === 'fail')
      return {
        status: 200,
        body: { status: 'failed', error: { code: 'EXECUTION_ERROR', message: `element ${element.n} failed` } },
        ...timing,
      };
    return { status: 200, body: { status: 'completed', result: { n: element.n } }, ...timing };
  };
  let mapAgent: MapAgent | undefined;
  beforeAll(async () => {
    const agent = await registerAgent({
      mcpUrl: server().route(ROUTE, answer),
      capabilities: {
        tools: [{ ...tool('list'), inputSchema: { type: 'object' } }, tool('work', { element: { type: 'object' } })],
      },
    });
    mapAgent = {
      agent,
      server: server(),
      list: (params, extra = {}) => ({ agentId: agent.agentId, operation: 'tools/list', params, ...extra }),
      work: (taskId, field, options = {}, extra = {}) => ({
        agentId: agent.agentId,
        operation: 'tools/work',
        params: { element: theItem() },
        parents: [taskId],
        forEach: { source: { taskId, field }, ...options },
        ...extra,
      }),
      callsFor: (taskId) =>
        server()
          .callsTo(ROUTE)
          .filter((received) => received.body?.taskId === taskId),
      release: (name) => gateOf(name).open(),
    };
  });
  return () => {
    if (!mapAgent) throw new Error('useMapAgent: the agent is there only inside tests');
    return mapAgent;
  };
}
