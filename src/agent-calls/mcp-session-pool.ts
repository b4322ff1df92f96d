import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AgentEndpoint } from './agent-endpoint';
import { McpSession, type McpSessionOptions } from './mcp-session';

/** Sessions kept at once in one process; the longest unused is ended past this. */
const MAX_SESSIONS = 64;

/** How often the agents of the kept sessions are looked up: a deleted or changed agent's session ends within this. */
export const AGENT_CHECK_MS = 5_000;

export interface McpSessionPoolOptions extends Omit<McpSessionOptions, 'signal'> {
  /** A session no call used for this long is ended (MCP_SESSION_IDLE_MS). */
  idleMs: number;
  /**
   * Whether `version` is still the current version of agent `agentId`: false for a deleted agent or
   * one registered anew. Asked every AGENT_CHECK_MS for each kept session; none, and no one is asked.
   */
  isCurrent?: (agentId: string, version: number) => Promise<boolean>;
}

interface Kept {
  agentId: string;
  version: number;
  session: Promise<McpSession>;
  /** Calls in the session now: a dropped session ends when the last of them does. */
  users: number;
  dropped: boolean;
  /** Ends the session once it has gone unused for idleMs; running only while no call is in it. */
  idle?: NodeJS.Timeout;
  /** Settles once the server heard the session end (or could not be told). */
  ended?: Promise<void>;
}

/**
 * MCP sessions kept open between calls, one per agent version, in the process that makes the calls:
 * a call goes on in its agent's session instead of initialising one and ending it. Requests of one
 * session run side by side (JSON-RPC ids tell their answers apart). A session the server no longer
 * knows (after a restart or an expiry) is opened again once; one whose requests fail below
 * HTTP (the server went away) is dropped, and the next call opens a new one. A call's own
 * cancellation or timeout leaves the session to the others. A session ends (with the DELETE MCP
 * asks of a client that no longer needs it) when it has gone unused for `idleMs`, when its agent
 * is deleted or changes version, and when the pool closes.
 */
export class McpSessionPool {
  private readonly sessions = new Map<string, Kept>();
  private agentChecks?: NodeJS.Timeout;

  constructor(private readonly options: McpSessionPoolOptions) {}

  /** Runs `use` in the agent's session, opened first if there is none. */
  async withSession<T>(
    agent: AgentEndpoint & { id: string; version: number },
    use: (session: McpSession) => Promise<T>,
  ): Promise<T> {
    const key = `${agent.id}@${agent.version}`;
    for (let attempt = 1; ; attempt += 1) {
      const kept = this.keptFor(key, agent);
      kept.users += 1;
      clearTimeout(kept.idle);
      try {
        return await use(await kept.session);
      } catch (error) {
        const gone = isForgotten(error);
        if (gone || isBroken(error)) this.drop(key, kept);
        if (gone && attempt === 1) continue;
        throw error;
      } finally {
        kept.users -= 1;
        if (kept.users === 0) this.unused(key, kept);
      }
    }
  }

  /**
   * Ends every session (the worker stopped): resolves once each server not in a call heard of it, or
   * after timeoutMs, so a server that does not answer the DELETE holds no shutdown longer than a call.
   */
  async close(): Promise<void> {
    const kept = [...this.sessions];
    for (const [key, one] of kept) this.drop(key, one);
    const bound = new Promise<void>((resolve) => setTimeout(resolve, this.options.timeoutMs).unref());
    const endings = kept.flatMap(([, one]) => (one.ended ? [one.ended] : []));
    await Promise.race([Promise.all(endings), bound]);
  }

  /** No call is in the session now: it ends if dropped, else once it stays unused for idleMs. */
  private unused(key: string, kept: Kept): void {
    if (kept.dropped) return end(kept);
    kept.idle = setTimeout(() => this.drop(key, kept), this.options.idleMs).unref();
  }

  /** Drops the sessions whose agent is gone or has another version now; a failed lookup keeps them. */
  private async checkAgents(): Promise<void> {
    const { isCurrent } = this.options;
    if (!isCurrent) return;
    await Promise.all(
      [...this.sessions].map(async ([key, kept]) => {
        if (!(await isCurrent(kept.agentId, kept.version).catch(() => true))) this.drop(key, kept);
      }),
    );
  }

  /** Agents are checked while sessions are kept, and not at all in a pool with none. */
  private watchAgents(): void {
    if (this.sessions.size > 0 && !this.agentChecks && this.options.isCurrent)
      this.agentChecks = setInterval(() => void this.checkAgents(), AGENT_CHECK_MS).unref();
    if (this.sessions.size === 0 && this.agentChecks) {
      clearInterval(this.agentChecks);
      this.agentChecks = undefined;
    }
  }

  private keptFor(key: string, agent: AgentEndpoint & { id: string; version: number }): Kept {
    const found = this.sessions.get(key);
    if (found) {
      // Most recently used last: the first in the map is the one to end.
      this.sessions.delete(key);
      this.sessions.set(key, found);
      return found;
    }
    // Another version of the agent may have another URL or headers: its session ends.
    for (const [other, kept] of this.sessions) if (other.startsWith(`${agent.id}@`)) this.drop(other, kept);
    // Not bound to one call's signal: the session outlives the call that opened it.
    const kept: Kept = {
      agentId: agent.id,
      version: agent.version,
      session: McpSession.open(agent, this.options),
      users: 0,
      dropped: false,
    };
    kept.session.catch(() => this.drop(key, kept));
    this.sessions.set(key, kept);
    if (this.sessions.size > MAX_SESSIONS) {
      const [oldest, first] = this.sessions.entries().next().value as [string, Kept];
      this.drop(oldest, first);
    }
    this.watchAgents();
    return kept;
  }

  /** Forgets the session; it ends at the server once no call is in it. */
  private drop(key: string, kept: Kept): void {
    if (kept.dropped) return;
    kept.dropped = true;
    clearTimeout(kept.idle);
    if (this.sessions.get(key) === kept) this.sessions.delete(key);
    this.watchAgents();
    if (kept.users === 0) end(kept);
  }
}

function end(kept: Kept): void {
  kept.ended = kept.session.then((session) => session.close()).catch(() => undefined);
}

/**
 * The server no longer knows the session: 404, as MCP asks, or 400, as some servers answer a session
 * id they never had (server-everything among them). Either way the request did not run, so it is
 * made again in a new session.
 */
function isForgotten(error: unknown): boolean {
  return error instanceof StreamableHTTPError && (error.code === 404 || error.code === 400);
}

/**
 * The session cannot serve another call: no HTTP answer came (undici's fetch fails with a
 * TypeError: refused, reset), or its connection closed (the SDK's ConnectionClosed).
 */
function isBroken(error: unknown): boolean {
  return (
    (error instanceof TypeError && error.message === 'fetch failed') ||
    (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number))
  );
}
