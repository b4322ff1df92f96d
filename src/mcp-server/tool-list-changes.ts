import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { Principal } from '../auth/principal';
import type { AgentDirectory } from '../registry/agent-directory';
import type { Freshness } from '../store/live-copy';
import { SseStream } from '../task-events/sse';
import type { McpScope } from './mcp-scope';

/** How often the open streams compare the callers' tools with those they last told of. */
export const TOOL_LIST_CHECK_MS = 2_000;

/** What tells one list of tools from another: each tool's name, agent and the agent's version. */
async function fingerprintOf(scope: McpScope, principal: Principal, freshness?: Freshness): Promise<string> {
  const served = await scope.catalog(principal, freshness);
  const hash = createHash('sha256');
  for (const tool of served) hash.update(`${tool.name}\u0000${tool.agentId}\u0000${tool.agent.version}\u0001`);
  if (scope.withRegistryTools) hash.update('registry tools');
  return hash.digest('base64url');
}

/** What a watch tells of the caller's tools. */
export interface ToolListWatcher {
  /** They differ from those last told of. */
  changed(): void;
  /** The scope is gone (its virtual server deleted, or no longer the caller's to see). */
  gone(): void;
}

/** One caller's tools in one scope, watched from `start` until `stop`. */
export interface ToolListWatch {
  start(watcher: ToolListWatcher): void;
  stop(): void;
}

/**
 * The checks of every open stream of tool list changes of a process, over one agent directory.
 * Every `everyMs` the directory catches up once (one read of its change counter, whatever the
 * number of streams), then each stream reads its scope again (a virtual server may have changed or
 * gone) and builds its caller's tools again only when the directory (`generation`) or the scope
 * (`revision`) moved since it last did: while nothing changes, a check builds no catalog. The timer
 * runs only while a stream is open and keeps no process alive.
 */
export class ToolListChecks {
  private readonly checks = new Set<() => Promise<void>>();
  private timer?: NodeJS.Timeout;
  private ticking = false;

  constructor(
    private readonly directory: Pick<AgentDirectory, 'catchUp' | 'generation'>,
    private readonly everyMs = TOOL_LIST_CHECK_MS,
  ) {}

  /**
   * The tools `principal` may use in `first`, read now (every change recorded before this call);
   * once started, the scope `scopeOf` reads is compared with them at each check.
   */
  async watch(
    principal: Principal,
    first: McpScope,
    scopeOf: () => Promise<McpScope | undefined>,
  ): Promise<ToolListWatch> {
    await this.directory.catchUp();
    let seen = { generation: this.directory.generation, revision: first.revision };
    // Built from the directory as just caught up, with no read of the counter of its own.
    let told = await fingerprintOf(first, principal, { readWithinMs: this.everyMs });
    let open = true;
    let watcher: ToolListWatcher | undefined;
    const check = async () => {
      try {
        const scope = await scopeOf();
        if (!open || !watcher) return;
        if (!scope) return watcher.gone();
        const now = { generation: this.directory.generation, revision: scope.revision };
        if (now.generation === seen.generation && now.revision === seen.revision) return;
        // The tick caught the directory up just before: the catalog reads no counter of its own.
        const fingerprint = await fingerprintOf(scope, principal, { readWithinMs: this.everyMs });
        seen = now;
        if (open && fingerprint !== told) {
          told = fingerprint;
          watcher.changed();
        }
      } catch {
        // A failed read is tried again at the next check.
      }
    };
    return {
      start: (given) => {
        if (!open) return;
        watcher = given;
        this.checks.add(check);
        this.schedule();
      },
      stop: () => {
        open = false;
        this.checks.delete(check);
        if (this.checks.size === 0) {
          clearTimeout(this.timer);
          this.timer = undefined;
        }
      },
    };
  }

  private schedule(): void {
    if (this.timer || this.ticking || this.checks.size === 0) return;
    this.timer = setTimeout(() => void this.tick(), this.everyMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    [this.timer, this.ticking] = [undefined, true];
    try {
      await this.directory.catchUp();
      await Promise.all([...this.checks].map((check) => check()));
    } catch {
      // A failed catch-up is tried again at the next tick; the streams are checked then.
    }
    this.ticking = false;
    this.schedule();
  }
}

/**
 * A session's stream of server-initiated messages (a `GET` without `Last-Event-ID`): it tells the
 * client `notifications/tools/list_changed` whenever the tools the caller may use there change (an
 * agent registered, changed, removed, shared or hidden; a virtual server changed), found by the
 * process's `checks` every TOOL_LIST_CHECK_MS. It reads the directory in memory, so any process
 * serves it; it ends when the client leaves, or when `scopeOf` finds the server gone.
 */
export async function streamToolListChanges(
  ctx: Context,
  principal: Principal,
  sessionId: string,
  first: McpScope,
  scopeOf: () => Promise<McpScope | undefined>,
  checks: ToolListChecks,
): Promise<void> {
  const watch = await checks.watch(principal, first, scopeOf);
  let sent = 0;
  const stream = new SseStream(ctx, () => watch.stop());
  watch.start({
    changed: () => {
      sent += 1;
      stream.send(`${sessionId}.tools.${sent}`, { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    },
    gone: () => stream.end(),
  });
}
