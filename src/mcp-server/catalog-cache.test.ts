import { PrincipalKind, type Principal } from '../auth/principal';
import type { Freshness } from '../store/live-copy';
import { CatalogCache } from './catalog-cache';
import type { McpScope } from './mcp-scope';
import type { ServedTool } from './served-tools';

const alice: Principal = { kind: PrincipalKind.SERVICE, id: 'alice' };
const bob: Principal = { kind: PrincipalKind.SERVICE, id: 'bob' };

/** A directory whose generation the test moves, and a scope whose builds it counts. */
function fixture(toolsPerCatalog = 1) {
  const directory = { generation: 1, catchUps: [] as Array<Freshness | undefined> };
  const builds: Array<{ principal: string; freshness?: Freshness }> = [];
  const scope: McpScope = {
    withRegistryTools: true,
    instructions: '',
    revision: 'registry',
    catalog: async (principal, freshness) => {
      builds.push({ principal: principal.id, ...(freshness ? { freshness } : {}) });
      return Array.from({ length: toolsPerCatalog }, (_, n) => ({ name: `${principal.id}.${n}` }) as ServedTool);
    },
  };
  const cache = new CatalogCache(
    {
      catchUp: async (freshness) => void directory.catchUps.push(freshness),
      get generation() {
        return directory.generation;
      },
    },
    4,
  );
  return { directory, builds, served: cache.serving(scope) };
}

describe('CatalogCache', () => {
  it("builds a caller's catalog once while the directory takes in no change, catching it up every time", async () => {
    const { directory, builds, served } = fixture();
    const first = await served.catalog(alice);
    expect(await served.catalog(alice, { readWithinMs: 1_000 })).toBe(first);
    expect(builds).toHaveLength(1);
    expect(directory.catchUps).toEqual([undefined, { readWithinMs: 1_000 }]);
    directory.generation = 2;
    expect(await served.catalog(alice)).not.toBe(first);
    expect(builds).toHaveLength(2);
  });

  it('keeps one catalog per caller: visibility goes by who asks', async () => {
    const { builds, served } = fixture();
    expect((await served.catalog(alice)).map((tool) => tool.name)).toEqual(['alice.0']);
    expect((await served.catalog(bob)).map((tool) => tool.name)).toEqual(['bob.0']);
    await served.catalog(alice);
    expect(builds.map((build) => build.principal)).toEqual(['alice', 'bob']);
  });

  it('builds on the counter read its catch-up took: a bound covering that read, not a read of its own', async () => {
    const { builds, served } = fixture();
    await served.catalog(alice, { readWithinMs: 1_000 });
    expect(builds[0].freshness?.readWithinMs).toBeGreaterThan(1_000);
    await served.catalog(bob);
    expect(builds[1].freshness?.readWithinMs).toBeGreaterThan(0);
    expect(builds[1].freshness?.readWithinMs).toBeLessThan(1_000);
  });

  it('holds at most its bound of tools, the least recently used catalogs going first', async () => {
    const { builds, served } = fixture(2);
    await served.catalog(alice);
    await served.catalog(bob);
    await served.catalog(alice);
    // A third caller's two tools pass the bound of four: bob's catalog, the least recently used, goes.
    await served.catalog({ kind: PrincipalKind.SERVICE, id: 'carol' });
    await served.catalog(alice);
    await served.catalog(bob);
    expect(builds.map((build) => build.principal)).toEqual(['alice', 'bob', 'carol', 'bob']);
  });
});
