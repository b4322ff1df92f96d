import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Dispatcher } from 'undici';
import type { AgentEndpoint } from './agent-endpoint';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { answerElicitation } from './mcp-elicitation';
import { guardedFetch, type BytesRead } from './guarded-fetch';
import { withBoundedResumptions } from './stream-resumptions';

/** Who the service is to an MCP server: its `clientInfo` at initialisation. */
const CLIENT_INFO = { name: 'agent-coordination-service', version: '1' } as const;

/** Failed attempts in a row at resuming one stream before it is given up. */
const RESUME_ATTEMPTS = 2;

/** An MCP server's address and the owner's headers for it. */
export type McpTarget = AgentEndpoint;

export interface McpSessionOptions {
  dispatcher: Dispatcher;
  /** Bound of each request of the session, initialisation included. */
  timeoutMs: number;
  maxReplyBytes: number;
  /** Counts the bytes of every reply of the session, when given: what an import bounds its reading by. */
  bytesRead?: BytesRead;
  /** Ends every request of the session early (an activity's cancellation). */
  signal?: AbortSignal;
}

/** A session opened earlier, to go on with: no initialisation, the same `Mcp-Session-Id`. */
export interface McpSessionRef {
  sessionId: string;
  protocolVersion: string;
}

/**
 * One MCP session at an agent's endpoint over Streamable HTTP, with the official SDK's client. Every
 * request goes through the outbound guard, carries the owner's headers (to the endpoint only: the
 * transport follows no redirect to another origin) and is bounded by `timeoutMs`.
 */
export class McpSession {
  private constructor(
    readonly client: Client,
    private readonly transport: StreamableHTTPClientTransport,
    private readonly options: McpSessionOptions,
  ) {}

  /** Initialises a new session, or goes on with `resume`. */
  static async open(target: McpTarget, options: McpSessionOptions, resume?: McpSessionRef): Promise<McpSession> {
    const transport = new StreamableHTTPClientTransport(new URL(target.endpointUrl), {
      fetch: withBoundedResumptions(
        guardedFetch(options.dispatcher, options.maxReplyBytes, options.bytesRead),
        options.timeoutMs,
      ),
      requestInit: { headers: target.headers ?? {} },
      // A stream the server closes before its answer is resumed with Last-Event-ID after the server's
      // `retry` (SEP-1699), or this backoff when it gave none; a stream that cannot be resumed is given
      // up after RESUME_ATTEMPTS failed attempts, and its request ends at its timeout.
      reconnectionOptions: {
        maxRetries: RESUME_ATTEMPTS,
        initialReconnectionDelay: 1_000,
        maxReconnectionDelay: 10_000,
        reconnectionDelayGrowFactor: 2,
      },
      ...(resume ? { sessionId: resume.sessionId } : {}),
    });
    if (resume) transport.setProtocolVersion(resume.protocolVersion);
    // Form and URL elicitation: a person answers through POST /tasks/{taskId}/input (src/agent-calls/mcp-elicitation.ts).
    const client = new Client(CLIENT_INFO, { capabilities: { elicitation: { form: {}, url: {} } } });
    client.setRequestHandler(ElicitRequestSchema, answerElicitation);
    const session = new McpSession(client, transport, options);
    try {
      await session.client.connect(transport, session.requestOptions());
    } catch (error) {
      await session.close(true);
      throw error;
    }
    return session;
  }

  /** What `McpSession.open` needs to go on with this session later; undefined for a server without sessions. */
  get ref(): McpSessionRef | undefined {
    const { sessionId, protocolVersion } = this.transport;
    return sessionId === undefined ? undefined : { sessionId, protocolVersion: protocolVersion ?? '' };
  }

  /** Options of every request: the session's bound and signal, and the caller's own (onprogress, say). */
  requestOptions(extra: RequestOptions = {}): RequestOptions {
    return {
      timeout: this.options.timeoutMs,
      maxTotalTimeout: this.options.timeoutMs,
      signal: this.options.signal,
      ...extra,
    };
  }

  /**
   * Ends the session at the server (DELETE), unless `keep`: a task the server runs lives in its
   * session, which later activities go on with. Never throws: the outcome is decided by then.
   */
  async close(keep = false): Promise<void> {
    if (!keep && this.transport.sessionId !== undefined) await this.transport.terminateSession().catch(() => undefined);
    await this.client.close().catch(() => undefined);
  }
}
