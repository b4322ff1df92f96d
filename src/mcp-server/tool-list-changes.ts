import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { Principal } from '../auth/principal';
import { SseStream } from '../task-events/sse';
import type { McpScope } from './mcp-scope';

/** How often an open stream compares the caller's tools with those it last told of. */
export const TOOL_LIST_CHECK_MS = 2_000;

/** What tells one list of tools from another: each tool's name, agent and the agent's version. */
async function fingerprintOf(scope: McpScope, principal: Principal): Promise<string> {
  const served = await scope.catalog(principal);
  const hash = createHash('sha256');
  for (const tool of served) hash.update(`${tool.name}\u0000${tool.agentId}\u0000${tool.agent.version}\u0001`);
  if (scope.withRegistryTools) hash.update('registry tools');
  return hash.digest('base64url');
}

/**
 * A session's stream of server-initiated messages (a `GET` without `Last-Event-ID`): it tells the
 * client `notifications/tools/list_changed` whenever the tools the caller may use there change (an
 * agent registered, changed, removed, shared or hidden; a virtual server changed), found by comparing
 * the list every TOOL_LIST_CHECK_MS. It reads the directory in memory, so any process serves it; it
 * ends when the client leaves, or when `scopeOf` finds the server gone.
 */
export async function streamToolListChanges(
  ctx: Context,
  principal: Principal,
  sessionId: string,
  first: McpScope,
  scopeOf: () => Promise<McpScope | undefined>,
  everyMs = TOOL_LIST_CHECK_MS,
): Promise<void> {
  let told = await fingerprintOf(first, principal);
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  let open = true;
  const stream = new SseStream(ctx, () => {
    open = false;
    clearTimeout(timer);
  });
  const check = async () => {
    if (!open) return;
    try {
      const scope = await scopeOf();
      if (!scope) return stream.end();
      const now = await fingerprintOf(scope, principal);
      if (now !== told) {
        told = now;
        sent += 1;
        stream.send(`${sessionId}.tools.${sent}`, { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      }
    } catch {
      // A failed read is tried again at the next check.
    }
    if (open) timer = setTimeout(() => void check(), everyMs);
  };
  timer = setTimeout(() => void check(), everyMs);
}
