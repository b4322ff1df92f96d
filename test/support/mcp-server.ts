import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { RequestTaskStore } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { useForFile } from './use-for-file';

/** One HTTP request the MCP server got: its JSON-RPC method (for POSTs) and headers. */
export interface McpRequest {
  httpMethod: string;
  rpcMethod?: string;
  toolName?: string;
  headers: http.IncomingHttpHeaders;
}

export interface McpServerOptions {
  /** Registers the tools, resources and prompts of each session's server. */
  setup: (server: McpServer) => void;
  /** Every request must carry these (lower-case names), or is answered 401. */
  requiredHeaders?: Record<string, string>;
  /** The answer to a session id the server does not know: 404 as MCP asks, unless given. */
  unknownSessionStatus?: number;
}

/**
 * An MCP server built with the official SDK's McpServer, over Streamable HTTP on 127.0.0.1: a
 * session (and a McpServer) per client, MCP tasks kept in one store. Every request is kept, and
 * the next tools/call of a tool can be made to answer an HTTP error.
 */
export class McpTestServer {
  readonly requests: McpRequest[] = [];
  /** The tasks of every session. */
  readonly taskStore = new InMemoryTaskStore();
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();
  private readonly failures = new Map<string, { count: number; status: number }>();

  private constructor(
    private readonly server: http.Server,
    private readonly options: McpServerOptions,
  ) {}

  static async start(options: McpServerOptions): Promise<McpTestServer> {
    const server = http.createServer();
    const mcp = new McpTestServer(server, options);
    server.on('request', (request, response) => {
      mcp.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500).end(String(error));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return mcp;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`;
  }

  /** The next `count` tools/call requests of `toolName` are answered HTTP `status`. */
  failNext(toolName: string, count: number, status = 503): void {
    this.failures.set(toolName, { count, status });
  }

  callsOf(rpcMethod: string): McpRequest[] {
    return this.requests.filter((request) => request.rpcMethod === rpcMethod);
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((transport) => transport.close().catch(() => undefined)));
    this.taskStore.cleanup();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const body = request.method === 'POST' ? await readJson(request) : undefined;
    const message = body as { method?: string; params?: { name?: string } } | undefined;
    this.requests.push({
      httpMethod: request.method ?? '',
      rpcMethod: message?.method,
      toolName: message?.method === 'tools/call' ? message.params?.name : undefined,
      headers: request.headers,
    });
    for (const [name, value] of Object.entries(this.options.requiredHeaders ?? {})) {
      if (request.headers[name] !== value) return void response.writeHead(401).end('unauthorized');
    }
    const failure = message?.method === 'tools/call' ? this.failures.get(message.params?.name ?? '') : undefined;
    if (failure && failure.count > 0) {
      failure.count -= 1;
      return void response.writeHead(failure.status).end('failing on purpose');
    }
    const sessionId = request.headers['mcp-session-id'] as string | undefined;
    let transport = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    if (!transport) {
      if (sessionId !== undefined || message?.method !== 'initialize')
        return void response.writeHead(this.options.unknownSessionStatus ?? 404).end('no such session');
      transport = await this.newSession();
    }
    await transport.handleRequest(request, response, body);
  }

  private async newSession(): Promise<StreamableHTTPServerTransport> {
    const server = new McpServer(
      { name: 'test-mcp-server', version: '1.0.0' },
      {
        capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
        taskStore: this.taskStore,
        taskMessageQueue: new InMemoryTaskMessageQueue(),
      },
    );
    this.options.setup(server);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, transport),
      onsessionclosed: (id) => void this.sessions.delete(id),
    });
    await server.connect(transport);
    return transport;
  }
}

async function readJson(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

/** An McpTestServer for the file's tests, started before them and closed after. */
export function useMcpServer(options: McpServerOptions): () => McpTestServer {
  return useForFile(
    'the MCP server',
    () => McpTestServer.start(options),
    (server) => server.close(),
  );
}

/**
 * A tool that runs as an MCP task (taskSupport required): its call creates the task (polls every
 * 500 ms suggested) and hands it to `work`, which ends it later through `store`, or never.
 */
export function registerTaskTool(
  server: McpServer,
  name: string,
  inputSchema: ZodRawShapeCompat,
  work: (taskId: string, store: RequestTaskStore, args: Record<string, any>) => void,
): void {
  server.experimental.tasks.registerToolTask(
    name,
    { description: `${name}, as an MCP task`, inputSchema, execution: { taskSupport: 'required' } },
    {
      createTask: async (args, extra) => {
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 500 });
        work(task.taskId, extra.taskStore, args as Record<string, any>);
        return { task };
      },
      getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
    },
  );
}

/** As many tools as a page of a hostile server holds: far more than a registration keeps (256). */
const PER_PAGE = 2_000;

/** A server whose every tools/list page is full, with another one after it: it pages forever. */
export function endlessPages(
  name: (page: number, index: number) => string,
  inputSchema: Record<string, unknown> = { type: 'object' },
) {
  return (server: McpServer): void => {
    server.server.registerCapabilities({ tools: {} });
    server.server.setRequestHandler(ListToolsRequestSchema, (request) => {
      const page = Number(request.params?.cursor ?? 0);
      const tools = Array.from({ length: PER_PAGE }, (_, index) => ({
        name: name(page, index),
        description: 'one of many',
        inputSchema,
      }));
      return { tools, nextCursor: String(page + 1) };
    });
  };
}
