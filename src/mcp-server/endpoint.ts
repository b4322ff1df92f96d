import { Readable } from 'node:stream';
import type { RouterContext } from '@koa/router';
import type { Context } from 'koa';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode as McpErrorCode,
  isInitializeRequest,
  isJSONRPCRequest,
  ListToolsRequestSchema,
  McpError,
  type JSONRPCMessage,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { requirePrincipal, type Principal } from '../auth/principal';
import type { AgentDirectory } from '../registry/agent-directory';
import { RECENT_AGENT_MAX_AGE_MS } from '../registry/recent-agents';
import { ApiError, ErrorCode } from '../http/errors';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { checkOrigin } from './allowed-origins';
import { CatalogCache } from './catalog-cache';
import { CallEventIds, cursorOf } from './call-event-ids';
import { handledByService, type ClientMessageDeps } from './client-messages';
import type { McpTaskRecords } from './mcp-task-records';
import type { McpSession, McpSessions } from './server-sessions';
import type { TaskLauncher } from '../tasks/task-launcher';
import { callRegistryTool, REGISTRY_TOOLS, type RegistryToolDeps } from './registry-tools';
import { sdkServer } from './sdk-server';
import { resumeCall } from './stream-resumption';
import { streamToolListChanges, ToolListChecks } from './tool-list-changes';
import { serveTaskRequests, startCallTask } from './task-requests';
import { callTool, type ToolCallDeps } from './tool-calls';
import { registryScope, virtualScope, type McpScope } from './mcp-scope';
import { argumentsOf, listedTool, type ServedTool } from './served-tools';
import { byName } from './tool-names';
import { serverNotFound } from './virtual-server-routes';
import type { VirtualServers } from './virtual-servers';

export const MCP_SERVER_ROUTES = routeTable({
  versioned: false,
  operations: {
    'POST /mcp': {
      summary:
        'One MCP server (Streamable HTTP, protocol 2025-11-25) whose tools are every tool of the agents the caller may see; each tools/call is a task (docs/mcp-server.md)',
      credential: 'any',
      body: { type: 'object' },
      success: [
        200,
        'A JSON-RPC response, as JSON or a text/event-stream with its notifications; 202 for a notification or a response; Mcp-Session-Id on the answer to initialize',
      ],
      errors: { '404': 'an Mcp-Session-Id that names no session of the caller (initialize again)' },
    },
    'GET /mcp': {
      summary:
        "With Last-Event-ID, resumes the stream of a tools/call (SEP-1699) from the task's event log, at any API process; without one, the session's stream of notifications/tools/list_changed",
      credential: 'any',
      success: [
        200,
        "A text/event-stream: the call's notifications after that event, then its answer; or the session's tool list changes",
      ],
      errors: {
        '404': 'no call of a session of the caller has this event id, or no such session of the caller',
        '405': 'neither a Last-Event-ID nor a session',
      },
    },
    'DELETE /mcp': {
      summary: 'Ends the session its Mcp-Session-Id names',
      credential: 'any',
      success: [200, 'The session ended'],
      errors: { '404': 'no such session of the caller' },
    },
    'POST /mcp/:serverId': {
      summary:
        'The MCP virtual server serverId (POST /mcp-servers): as POST /mcp, with only its tools, under their names there, their defaults under the arguments',
      credential: 'any',
      body: { type: 'object' },
      success: [200, 'As POST /mcp'],
      errors: {
        '404':
          'no virtual server serverId the caller may see, or an Mcp-Session-Id that names no session of the caller on it',
      },
    },
    'GET /mcp/:serverId': {
      summary: 'As GET /mcp, for a call made on the virtual server serverId',
      credential: 'any',
      success: [200, 'As GET /mcp'],
      errors: {
        '404': 'no virtual server serverId the caller may see, or no call of a session of the caller on it',
        '405': 'neither a Last-Event-ID nor a session',
      },
    },
    'DELETE /mcp/:serverId': {
      summary: 'Ends the session of the virtual server its Mcp-Session-Id names',
      credential: 'any',
      success: [200, 'The session ended'],
      errors: { '404': 'no such virtual server, or no such session of the caller on it' },
    },
  },
});

export interface McpEndpointDeps
  extends Omit<ToolCallDeps, 'launcher'>, ClientMessageDeps, Omit<RegistryToolDeps, 'launcher'> {
  launcher: Pick<TaskLauncher, 'launchTask' | 'launchComposition'>;
  sessions: McpSessions;
  mcpTasks: McpTaskRecords;
  /** Whether a page of this web origin may call (allowed-origins.ts). */
  mayCallFrom: (origin: string) => boolean;
  servers: Pick<VirtualServers, 'findVisible'>;
  directory: RegistryToolDeps['directory'] & Pick<AgentDirectory, 'catchUp' | 'generation'>;
}

/** Tools one `tools/list` page holds; `nextCursor` names the last. */
const TOOLS_PAGE = 500;
/** What a client whose stream broke waits before it resumes it, as the stream's first event tells it. */
const RESUME_AFTER_MS = 1_000;
const SERVER_INFO = { name: 'agent-coordination-service', title: 'Agent coordination service', version: '1.0.0' };

/**
 * `/mcp`: the registry as one MCP server, over the official SDK's server and its Streamable HTTP
 * transport, a fresh pair for every request: what a session must remember lives in the store
 * (McpSessions), so any API process serves any request of it.
 */
export function createMcpEndpoint(deps: McpEndpointDeps): RouteModule {
  const router = new DocumentedRouter(MCP_SERVER_ROUTES);
  /** Serves `route` once the request's Origin may call: a browser page of a site not allowed is refused whatever it asks. */
  const serve = (route: Parameters<typeof router.serve>[0], handler: (ctx: RouterContext) => Promise<void>) =>
    router.serve(route, async (ctx) => {
      checkOrigin(ctx.get('origin') || undefined, deps.mayCallFrom);
      await handler(ctx);
    });
  const catalogs = new CatalogCache(deps.directory);
  const registry = catalogs.serving(registryScope(deps.directory));
  const toolListChecks = new ToolListChecks(deps.directory);

  serve('POST /mcp', (ctx) => post(ctx, requirePrincipal(ctx), registry));
  serve('GET /mcp', (ctx) => get(ctx, requirePrincipal(ctx), () => Promise.resolve(registry)));
  serve('DELETE /mcp', (ctx) => end(ctx, requirePrincipal(ctx), registry));
  serve('POST /mcp/:serverId', async (ctx) => {
    const principal = requirePrincipal(ctx);
    await post(ctx, principal, await virtualServerScope(principal, ctx.params.serverId));
  });
  serve('GET /mcp/:serverId', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const { serverId } = ctx.params;
    await get(ctx, principal, () => virtualServerScope(principal, serverId));
  });
  serve('DELETE /mcp/:serverId', async (ctx) => {
    const principal = requirePrincipal(ctx);
    await end(ctx, principal, await virtualServerScope(principal, ctx.params.serverId));
  });

  /** A request of an MCP client to the server `scope` is. */
  async function post(ctx: Context, principal: Principal, scope: McpScope): Promise<void> {
    const session = await sessionOf(ctx, principal, scope);
    const message = ctx.request.body as JSONRPCMessage;
    if (await handledByService(deps, principal, session, message)) {
      ctx.status = 202;
      return;
    }
    const initialize = isInitializeRequest(message) ? message.params : undefined;
    // A call's stream in a session carries event ids a client resumes it with (stream-resumption.ts).
    const eventIds = session && isResumableCall(message) ? new CallEventIds(session.sessionId, message.id) : undefined;
    const server = serverFor(principal, session, scope, eventIds);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      ...(eventIds ? { eventStore: eventIds, retryInterval: RESUME_AFTER_MS } : {}),
    });
    await server.connect(transport);
    const response = await transport.handleRequest(requestOf(ctx), { parsedBody: message });
    if (response.status >= 400) {
      void server.close();
      throw await refusalOf(response);
    }
    if (initialize && response.status === 200) {
      const sessionId = await deps.sessions.open(principal, {
        capabilities: initialize.capabilities,
        protocolVersion: initialize.protocolVersion,
        ...(scope.serverId === undefined ? {} : { serverId: scope.serverId }),
      });
      ctx.set('Mcp-Session-Id', sessionId);
    }
    answerWith(ctx, response, () => void server.close());
  }

  /**
   * A GET on the server `scopeOf` reads: with the Last-Event-ID of a call's stream, that stream
   * resumed; else, in a session, the session's stream of tool list changes; without a session, 405.
   */
  async function get(ctx: Context, principal: Principal, scopeOf: () => Promise<McpScope>): Promise<void> {
    const scope = await scopeOf();
    const cursor = cursorOf(ctx.get('last-event-id'));
    if (cursor) {
      const session = await deps.sessions.find(cursor.sessionId, principal);
      if (!session || session.serverId !== scope.serverId) noSession();
      return resumeCall(ctx, deps, session, cursor);
    }
    const session = await sessionOf(ctx, principal, scope);
    if (!session) {
      ctx.set('Allow', 'POST, DELETE');
      throw new ApiError(
        ErrorCode.METHOD_NOT_ALLOWED,
        'A GET without a session names no stream: resume a call with Last-Event-ID, or name the session',
      );
    }
    // The server may change or go while the stream is open: read again at each check.
    const readAgain = async (): Promise<McpScope | undefined> => {
      try {
        return await scopeOf();
      } catch (error) {
        if (error instanceof ApiError) return undefined;
        throw error;
      }
    };
    await streamToolListChanges(ctx, principal, session.sessionId, scope, readAgain, toolListChecks);
  }

  /** Ends the session the request names, of the caller on the server `scope` is. */
  async function end(ctx: Context, principal: Principal, scope: McpScope): Promise<void> {
    const session = await sessionOf(ctx, principal, scope);
    if (!session || !(await deps.sessions.close(session.sessionId, principal))) noSession();
    ctx.status = 200;
    ctx.body = {};
  }

  /** The scope of virtual server `serverId`; 404 when the caller may not see it. */
  async function virtualServerScope(principal: Principal, serverId: string): Promise<McpScope> {
    const server = await deps.servers.findVisible(principal, serverId);
    if (!server) throw serverNotFound(serverId);
    return catalogs.serving(virtualScope(deps.directory, server));
  }

  /**
   * The session the request names; undefined when it names none; 404 when it names one the caller
   * has not, or one opened on another server path.
   */
  async function sessionOf(ctx: Context, principal: Principal, scope: McpScope): Promise<McpSession | undefined> {
    const sessionId = ctx.get('mcp-session-id');
    if (!sessionId) return undefined;
    const session = await deps.sessions.find(sessionId, principal);
    return session && session.serverId === scope.serverId ? session : noSession();
  }

  /** An SDK server for one request of `principal`, answering with the catalog of what it may see. */
  function serverFor(
    principal: Principal,
    session: McpSession | undefined,
    scope: McpScope,
    eventIds: CallEventIds | undefined,
  ): Server {
    const server = sdkServer(SERVER_INFO, {
      capabilities: {
        tools: { listChanged: true },
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      instructions: scope.instructions,
    });
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const served = await scope.catalog(principal);
      const tools = [...(scope.withRegistryTools ? REGISTRY_TOOLS : []), ...served].sort(byName);
      const cursor = request.params?.cursor;
      const start = cursor === undefined ? 0 : tools.findIndex((tool) => tool.name > cursor);
      const page = start < 0 ? [] : tools.slice(start, start + TOOLS_PAGE);
      const more = start >= 0 && start + TOOLS_PAGE < tools.length;
      // Only the page's tools are built as MCP lists them: a large catalog is paged many times.
      const listed = page.map((tool) => ('agentId' in tool ? listedTool(tool) : tool));
      return { tools: listed, ...(more ? { nextCursor: page[page.length - 1].name } : {}) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name } = request.params;
      const args = request.params.arguments ?? {};
      const catalog = () => scope.catalog(principal);
      if (scope.withRegistryTools && REGISTRY_TOOLS.some((tool) => tool.name === name)) {
        // The registry's own tools answer at once and declare no taskSupport: a task of them is -32601, as MCP says.
        if (request.params.task)
          throw new McpError(McpErrorCode.MethodNotFound, `Tool ${name} does not run as an MCP task`);
        const answered = await callRegistryTool(deps, principal, name, args, catalog);
        if (answered) return answered;
      }
      const named = await toolNamed(principal, scope, name);
      if (!named) throw new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${name}`);
      if (request.params.task) return startCallTask(deps, named, argumentsOf(named, args), principal);
      return callTool(deps, named, argumentsOf(named, args), {
        principal,
        session,
        requestId: extra.requestId,
        progressToken: request.params._meta?.progressToken,
        signal: extra.signal,
        notify: (notification) => extra.sendNotification(notification),
        ask: (elicitation) => server.transport!.send(elicitation, { relatedRequestId: extra.requestId }),
        at: (seq) => {
          if (eventIds) eventIds.seq = seq;
        },
      });
    });
    serveTaskRequests(server, deps, principal, session);
    return server;
  }

  return router.module();
}

/**
 * The tool a `tools/call` names, with the freshness `POST /tasks` has: the directory as caught up
 * by a read of its change counter begun within RECENT_AGENT_MAX_AGE_MS (another request's, most
 * often: no store read of its own), as recent-agents.ts serves a task's agent. A change made
 * through this process shows at once, and a name not found there is looked up again in a directory
 * caught up with every change recorded before the call, as an agent unknown to recent-agents.ts is
 * read anew: a tool registered anywhere is callable at once. The task launched then checks its agent
 * as `POST /tasks` does.
 */
async function toolNamed(principal: Principal, scope: McpScope, name: string): Promise<ServedTool | undefined> {
  const recent = await scope.catalog(principal, { readWithinMs: RECENT_AGENT_MAX_AGE_MS });
  return (
    recent.find((tool) => tool.name === name) ?? (await scope.catalog(principal)).find((tool) => tool.name === name)
  );
}

/** A plain `tools/call`, whose stream a client may resume; a task-augmented one answers at once. */
function isResumableCall(message: JSONRPCMessage): message is JSONRPCRequest {
  return isJSONRPCRequest(message) && message.method === 'tools/call' && message.params?.task === undefined;
}

/** The request as the SDK's transport reads it: its method, URL and headers; the body is passed parsed. */
function requestOf(ctx: Context): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const each of value) headers.append(name, each);
  }
  return new Request(new URL(ctx.originalUrl, `http://${ctx.host || 'localhost'}`), { method: ctx.method, headers });
}

/** Answers `ctx` with the transport's response, its stream as it comes; `done` runs once the answer is over. */
function answerWith(ctx: Context, response: Response, done: () => void): void {
  ctx.status = response.status;
  response.headers.forEach((value, name) => ctx.set(name, value));
  ctx.res.once('close', done);
  ctx.body = response.body ? Readable.fromWeb(response.body) : '';
}

/** The transport's HTTP refusals by status, as the contract's errors; any other 4xx is the request's fault. */
const REFUSAL_CODES = new Map<number, ErrorCode>([
  [404, ErrorCode.NOT_FOUND],
  [405, ErrorCode.METHOD_NOT_ALLOWED],
  [409, ErrorCode.CONFLICT],
  [415, ErrorCode.UNSUPPORTED_MEDIA_TYPE],
]);

/**
 * A refusal of the SDK's transport (a request that is not JSON-RPC, an Accept without
 * text/event-stream, a protocol version it does not speak) in the contract's body, as every non-2xx
 * answer of the API has it; its JSON-RPC message says what was wrong. MCP's clients read the status.
 */
async function refusalOf(response: Response): Promise<ApiError> {
  const text = await response.text();
  let message = text;
  try {
    message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
  } catch {
    // Not JSON: the text is the message.
  }
  if (response.status >= 500) return new ApiError(ErrorCode.INTERNAL, `MCP transport: ${message}`);
  return new ApiError(REFUSAL_CODES.get(response.status) ?? ErrorCode.VALIDATION_ERROR, message || 'Bad MCP request');
}

/** MCP's answer to a session id it does not know: 404, for the client to initialize again. */
function noSession(): never {
  throw new ApiError(ErrorCode.NOT_FOUND, 'No such MCP session of the caller: initialize again');
}
