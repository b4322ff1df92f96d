import { ADMIN_PRINCIPAL } from '../auth/principal';
import type { ListedAgent } from '../registry/agent';
import { memoryChangeLog } from '../../test/support/memory-change-log';
import { LiveCopy, type Freshness } from '../store/live-copy';
import { registryScope, type McpScope } from './mcp-scope';
import { ToolListChecks, type ToolListWatch } from './tool-list-changes';

const EVERY_MS = 2_000;

/** A directory over a LiveCopy whose change log is in memory, counting the reads of its counter and the catalogs built. */
function setUp() {
  const { log, changedIds, reads } = memoryChangeLog();
  const agents = new Map<string, ListedAgent>();
  let catalogs = 0;
  /** The reads of the change counter and the catalogs built since the last call. */
  const counted = () => {
    const counts = { counterReads: reads.counter, catalogs };
    [reads.counter, catalogs] = [0, 0];
    return counts;
  };
  let generation = 0;
  const copy = new LiveCopy(
    log,
    {
      load: async () => undefined,
      install: () => (generation += 1),
      refresh: async () => {
        generation += 1;
      },
    },
    60 * 60_000,
  );
  const directory = {
    catchUp: (freshness?: Freshness) => copy.catchUp(freshness),
    get generation() {
      return generation;
    },
    listVisible: async (_principal: unknown, _page: unknown, _operation?: string, freshness?: Freshness) => {
      catalogs += 1;
      await copy.catchUp(freshness);
      return [...agents.values()];
    },
  };
  const register = (id: string) => {
    agents.set(id, {
      id,
      name: `Bot ${id}`,
      version: 1,
      capabilities: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] },
    } as unknown as ListedAgent);
    changedIds.push(id);
  };
  return { directory, counted, register, checks: new ToolListChecks(directory, EVERY_MS) };
}

describe('ToolListChecks', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0, doNotFake: ['nextTick', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('reads the change counter once per tick for all streams, and builds no catalog while nothing changed', async () => {
    const { directory, counted, register, checks } = setUp();
    const scope = registryScope(directory);
    const told: number[] = [];
    const watches: ToolListWatch[] = [];
    for (let stream = 0; stream < 20; stream += 1) {
      const watch = await checks.watch(ADMIN_PRINCIPAL, scope, async () => scope);
      told.push(0);
      watch.start({ changed: () => (told[stream] += 1), gone: () => undefined });
      watches.push(watch);
    }
    counted();
    for (let tick = 1; tick <= 3; tick += 1) {
      await jest.advanceTimersByTimeAsync(EVERY_MS);
      expect(counted()).toEqual({ counterReads: 1, catalogs: 0 });
    }
    expect(told.every((times) => times === 0)).toBe(true);

    register('a1');
    await jest.advanceTimersByTimeAsync(EVERY_MS);
    // Each stream builds its catalog again, from the directory the tick caught up.
    expect(counted()).toEqual({ counterReads: 1, catalogs: 20 });
    expect(told.every((times) => times === 1)).toBe(true);
    await jest.advanceTimersByTimeAsync(EVERY_MS);
    expect(counted()).toEqual({ counterReads: 1, catalogs: 0 });

    watches.forEach((watch) => watch.stop());
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(5 * EVERY_MS);
    expect(counted()).toEqual({ counterReads: 0, catalogs: 0 });
  });

  it("builds a stream's catalog again when its scope's revision moves, and tells it when the scope is gone", async () => {
    const { directory, counted, checks } = setUp();
    const base = registryScope(directory);
    let current: McpScope | undefined = base;
    const watch = await checks.watch(ADMIN_PRINCIPAL, base, async () => current);
    const events: string[] = [];
    watch.start({ changed: () => events.push('changed'), gone: () => events.push('gone') });
    await jest.advanceTimersByTimeAsync(EVERY_MS);
    counted();
    current = { ...base, revision: 'server@2', withRegistryTools: false };
    await jest.advanceTimersByTimeAsync(EVERY_MS);
    expect(counted()).toEqual({ counterReads: 1, catalogs: 1 });
    expect(events).toEqual(['changed']);
    current = undefined;
    await jest.advanceTimersByTimeAsync(EVERY_MS);
    expect(events).toEqual(['changed', 'gone']);
    watch.stop();
    expect(jest.getTimerCount()).toBe(0);
  });
});
