import type { Principal } from '../auth/principal';
import type { AgentDirectory } from '../registry/agent-directory';
import type { Freshness } from '../store/live-copy';
import type { McpScope } from './mcp-scope';
import type { ServedTool } from './served-tools';

/** Tools held in all the catalogs kept, at most: the least recently used catalogs go first. */
export const MAX_CACHED_TOOLS = 100_000;

interface KeptCatalog {
  /** The directory's generation the catalog was built from (AgentDirectory.generation). */
  generation: number;
  tools: ServedTool[];
}

/**
 * The catalogs of this process's callers, each kept while the directory holds what it was built
 * from: a caller's `tools/call` finds its tool in the catalog its last request built rather than
 * naming every tool it may see again, which grows with the registry. A catalog depends on the
 * scope (its `revision`), on who asks (visibility goes by principal), and on the directory, whose
 * generation moves with every change it takes in. Callers share the arrays: none may change them.
 */
export class CatalogCache {
  /** By scope and principal, the least recently used first. */
  private readonly kept = new Map<string, KeptCatalog>();
  private keptTools = 0;

  constructor(
    private readonly directory: Pick<AgentDirectory, 'catchUp' | 'generation'>,
    private readonly maxTools = MAX_CACHED_TOOLS,
  ) {}

  /** `scope` with its catalog served from this cache. */
  serving(scope: McpScope): McpScope {
    return { ...scope, catalog: (principal, freshness) => this.catalogOf(scope, principal, freshness) };
  }

  private async catalogOf(scope: McpScope, principal: Principal, freshness?: Freshness): Promise<ServedTool[]> {
    const begun = Date.now();
    await this.directory.catchUp(freshness);
    // Read before the build: a change taken in during it leaves the catalog behind, built again next time.
    const generation = this.directory.generation;
    const key = `${scope.revision}\u0000${principal.kind}\u0000${principal.id}`;
    const found = this.kept.get(key);
    if (found?.generation === generation) {
      this.kept.delete(key);
      this.kept.set(key, found);
      return found.tools;
    }
    // The directory caught up just now: the build accepts the read of its counter that catch-up took.
    const readWithinMs = (freshness?.readWithinMs ?? 0) + (Date.now() - begun) + 1;
    const tools = await scope.catalog(principal, { readWithinMs });
    this.keep(key, { generation, tools });
    return tools;
  }

  private keep(key: string, catalog: KeptCatalog): void {
    const before = this.kept.get(key);
    if (before) {
      this.kept.delete(key);
      this.keptTools -= before.tools.length;
    }
    if (catalog.tools.length > this.maxTools) return;
    this.kept.set(key, catalog);
    this.keptTools += catalog.tools.length;
    for (const [oldest, { tools }] of this.kept) {
      if (this.keptTools <= this.maxTools) break;
      this.kept.delete(oldest);
      this.keptTools -= tools.length;
    }
  }
}
