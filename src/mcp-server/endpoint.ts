import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
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
import { ApiError, ErrorCode } from '../http/errors';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { CallEventIds, cursorOf } from './call-event-ids';
import { handledByService, type ClientMessageDeps } from './client-messages';
import type { McpTaskRecords } from './mcp-task-records';
import type { McpSession, McpSessions } from './server-sessions';
import type { TaskLauncher } from '../tasks/task-launcher';
import { callRegistryTool, REGISTRY_TOOLS, type RegistryToolDeps } from './registry-tools';
import { resumeCall } from './stream-resumption';
import { serveTaskRequests, startCallTask } from './task-requests';
import { callTool, type ToolCallDeps } from './tool-calls';
import { mcpTool, toolCatalog } from './tool-catalog';

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
        "Resumes the stream of a tools/call its Last-Event-ID names (SEP-1699), from the task's event log, at any API process; without one, 405: no stream of server-initiated messages is offered",
      credential: 'any',
      success: [200, "A text/event-stream: the call's notifications after that event, then its answer"],
      errors: { '404': 'no call of a session of the caller has this event id', '405': 'no Last-Event-ID' },
    },
    'DELETE /mcp': {
      summary: 'Ends the session its Mcp-Session-Id names',
      credential: 'any',
      success: [200, 'The session ended'],
      errors: { '404': 'no such session of the caller' },
    },
  },
});

export interface McpEndpointDeps
  extends Omit<ToolCallDeps, 'launcher'>, ClientMessageDeps, Omit<RegistryToolDeps, 'launcher'> {
  launcher: Pick<TaskLauncher, 'launchTask' | 'launchComposition'>;
  sessions: McpSessions;
  mcpTasks: McpTaskRecords;
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

  router.serve('POST /mcp', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const session = await sessionOf(ctx, principal);
    const message = ctx.request.body as JSONRPCMessage;
    if (await handledByService(deps, principal, session, message)) {
      ctx.status = 202;
      return;
    }
    const initialize = isInitializeRequest(message) ? message.params : undefined;
    // A request's stream in a session carries event ids a client resumes it with (stream-resumption.ts).
    const eventIds = session && isResumableCall(message) ? new CallEventIds(session.sessionId, message.id) : undefined;
    const server = serverFor(principal, session, eventIds);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      ...(eventIds ? { eventStore: eventIds, retryInterval: RESUME_AFTER_MS } : {}),
    });
    await server.connect(transport);
    const response = await transport.handleRequest(requestOf(ctx), { parsedBody: message });
    if (initialize && response.status === 200) {
      const sessionId = await deps.sessions.open(principal, {
        capabilities: initialize.capabilities,
        protocolVersion: initialize.protocolVersion,
      });
      ctx.set('Mcp-Session-Id', sessionId);
    }
    answerWith(ctx, response, () => void server.close());
  });

  router.serve('GET /mcp', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const cursor = cursorOf(ctx.get('last-event-id'));
    if (!cursor) {
      ctx.set('Allow', 'POST, DELETE');
      throw new ApiError(
        ErrorCode.METHOD_NOT_ALLOWED,
        'GET /mcp resumes a call with Last-Event-ID; no stream of server-initiated messages is offered',
      );
    }
    await resumeCall(ctx, deps, principal, cursor);
  });

  router.serve('DELETE /mcp', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const sessionId = ctx.get('mcp-session-id');
    if (!sessionId || !(await deps.sessions.close(sessionId, principal))) noSession();
    ctx.status = 200;
    ctx.body = {};
  });

  /** The session the request names; undefined when it names none; 404 when it names one the caller has not. */
  async function sessionOf(ctx: Context, principal: Principal): Promise<McpSession | undefined> {
    const sessionId = ctx.get('mcp-session-id');
    if (!sessionId) return undefined;
    return (await deps.sessions.find(sessionId, principal)) ?? noSession();
  }

  /** An SDK server for one request of `principal`, answering with the catalog of what it may see. */
  function serverFor(principal: Principal, session: McpSession | undefined, eventIds?: CallEventIds): Server {
    const server = new Server(SERVER_INFO, {
      capabilities: {
        tools: { listChanged: false },
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      instructions:
        "Each tool is a tool of an agent of the registry, named {agent}.{tool}; each call runs as a durable task of the service, whose id is in the result's _meta.",
    });
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const tools = [...REGISTRY_TOOLS, ...(await toolCatalog(deps.directory, principal)).map(mcpTool)].sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
      );
      const cursor = request.params?.cursor;
      const start = cursor === undefined ? 0 : tools.findIndex((tool) => tool.name > cursor);
      const page = start < 0 ? [] : tools.slice(start, start + TOOLS_PAGE);
      const more = start >= 0 && start + TOOLS_PAGE < tools.length;
      return { tools: page, ...(more ? { nextCursor: page[page.length - 1].name } : {}) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name } = request.params;
      const args = request.params.arguments ?? {};
      const catalog = () => toolCatalog(deps.directory, principal);
      // The registry's own tools answer at once and declare no taskSupport: a task of them is -32601, as MCP says.
      if (request.params.task && REGISTRY_TOOLS.some((tool) => tool.name === name))
        throw new McpError(McpErrorCode.MethodNotFound, `Tool ${name} does not run as an MCP task`);
      const answered = await callRegistryTool(deps, principal, name, args, catalog);
      if (answered) return answered;
      const named = (await catalog()).find((tool) => tool.name === name);
      if (!named) throw new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${name}`);
      if (request.params.task) return startCallTask(deps, named, args, principal);
      return callTool(deps, named, args, {
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

/** MCP's answer to a session id it does not know: 404, for the client to initialize again. */
function noSession(): never {
  throw new ApiError(ErrorCode.NOT_FOUND, 'No such MCP session of the caller: initialize again');
}
