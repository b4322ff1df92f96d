import { randomBytes } from 'node:crypto';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { samePrincipal, type Principal } from '../auth/principal';
import { ChangeLog } from '../store/change-log';
import { InsertBatches } from '../store/insert-batches';
import type { Store } from '../store/mongo';
import { KnownSessions } from './known-sessions';

export const MCP_SESSIONS_COLLECTION = 'mcp_sessions';
export const MCP_CALLS_COLLECTION = 'mcp_calls';

/** A client's session with `/mcp`: what its `initialize` said, for whichever process serves its next request. */
export interface McpSession {
  sessionId: string;
  principal: Principal;
  capabilities: ClientCapabilities;
  protocolVersion: string;
  /** The virtual server the session was opened on (`/mcp/{serverId}`); absent for `/mcp`. */
  serverId?: string;
}

interface SessionDocument {
  _id: string;
  principal: Pick<Principal, 'kind' | 'id'>;
  capabilities: string;
  protocolVersion: string;
  serverId?: string;
  createdAt: Date;
}

/** A `tools/call` of a session and the task it started, for its `notifications/cancelled` and a resumption of its stream. */
export interface McpCall {
  taskId: string;
  progressToken?: string | number;
}

/** `{sessionId}/{requestId}`: a call of the session. */
interface CallDocument extends McpCall {
  _id: string;
  at: Date;
}

/** A session as a process keeps it in memory: its capabilities parsed once, not at each request. */
type KnownSession = Omit<McpSession, 'sessionId' | 'principal'> & { principal: SessionDocument['principal'] };

const knownSessionOf = ({ principal, capabilities, protocolVersion, serverId }: SessionDocument): KnownSession => ({
  principal,
  capabilities: JSON.parse(capabilities) as ClientCapabilities,
  protocolVersion,
  ...(serverId === undefined ? {} : { serverId }),
});

/**
 * The sessions of `/mcp`, kept in the store rather than in a process: a client's next request may
 * land on any API process, or on this one after a restart, and goes on (no sticky sessions). Each
 * process serves the sessions it knows from memory (KnownSessions): a session ended through it is
 * gone at once, one ended through another within RECENT_AGENT_MAX_AGE_MS. A session belongs to the
 * principal that opened it; another's requests do not find it.
 */
export class McpSessions {
  private readonly ends: ChangeLog;
  private readonly known: KnownSessions<KnownSession>;
  /** Calls of many sessions at once share their writes. */
  private readonly newCalls: InsertBatches<CallDocument>;

  constructor(private readonly store: Store) {
    this.ends = new ChangeLog(store, MCP_SESSIONS_COLLECTION);
    this.newCalls = new InsertBatches(this.calls);
    this.known = new KnownSessions(this.ends, async (sessionId) => {
      const stored = await this.sessions.findOne({ _id: sessionId });
      return stored && knownSessionOf(stored);
    });
  }

  private get sessions() {
    return this.store.collection<SessionDocument>(MCP_SESSIONS_COLLECTION);
  }

  private get calls() {
    return this.store.collection<CallDocument>(MCP_CALLS_COLLECTION);
  }

  /** A new session for what `initialize` said; its id is the `Mcp-Session-Id` the client sends from then on. */
  async open(
    principal: Principal,
    { capabilities, protocolVersion, serverId }: Pick<McpSession, 'capabilities' | 'protocolVersion' | 'serverId'>,
  ): Promise<string> {
    const sessionId = randomBytes(24).toString('base64url');
    const session: SessionDocument = {
      _id: sessionId,
      principal: { kind: principal.kind, id: principal.id },
      // As JSON text: capabilities are the client's, with keys a store may refuse as field names.
      capabilities: JSON.stringify(capabilities),
      protocolVersion,
      ...(serverId === undefined ? {} : { serverId }),
      createdAt: new Date(),
    };
    await this.sessions.insertOne(session);
    this.known.remember(sessionId, knownSessionOf(session));
    return sessionId;
  }

  /** The session `sessionId` of `principal`; undefined when there is none, or it is another's. */
  async find(sessionId: string, principal: Principal): Promise<McpSession | undefined> {
    const found = await this.known.find(sessionId);
    if (!found || !samePrincipal(found.principal, principal)) return undefined;
    return { ...found, sessionId, principal };
  }

  /**
   * Ends the session (`DELETE /mcp`); false when `principal` has no such session. This process
   * forgets it at once; the others when they read its end in the log.
   */
  async close(sessionId: string, principal: Principal): Promise<boolean> {
    if (!(await this.find(sessionId, principal))) return false;
    const deleted = (await this.sessions.deleteOne({ _id: sessionId })).deletedCount === 1;
    this.known.forget(sessionId);
    if (deleted) await this.ends.record(sessionId);
    return deleted;
  }

  /** Remembers that request `requestId` of the session started a task. */
  async recordCall(sessionId: string, requestId: string | number, call: McpCall): Promise<void> {
    const record = { ...call, at: new Date() };
    const id = callIdOf(sessionId, requestId);
    if ((await this.newCalls.insert({ _id: id, ...record })) === 'inserted') return;
    // MCP asks a client not to use a request id twice in a session; one that does (a host started
    // again on its saved session, counting from 0) names its latest call with it.
    await this.calls.replaceOne({ _id: id }, record);
  }

  /** The call `requestId` of the session made, if it started a task. */
  async callOf(sessionId: string, requestId: string | number): Promise<McpCall | undefined> {
    const found = await this.calls.findOne({ _id: callIdOf(sessionId, requestId) });
    return found
      ? { taskId: found.taskId, ...(found.progressToken === undefined ? {} : { progressToken: found.progressToken }) }
      : undefined;
  }
}

/** A request id is a string or a number, and `1` and `"1"` are different ids. */
const callIdOf = (sessionId: string, requestId: string | number) =>
  `${sessionId}/${typeof requestId}:${String(requestId)}`;
