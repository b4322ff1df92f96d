// The trivial agent of bench/tasks as an MCP server: the official SDK's McpServer over Streamable
// HTTP on 127.0.0.1, a session (and a McpServer) per client keyed by mcp-session-id. run.ts starts
// it as a child process of its own, so that its CPU is counted apart from the bench process's.
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** One HTTP request the MCP agent got; times in ms since the epoch, comparable across processes of one machine. */
export interface McpRequestRecord {
  httpMethod: string;
  /** JSON-RPC method of a POST. */
  rpcMethod?: string;
  /** The session it belongs to: the header, or for initialize the id the answer gives. */
  sessionId?: string;
  /** tools/call's `text` argument. */
  text?: string;
  status?: number;
  arrivedAt: number;
  /** When the answer was written out (for the GET stream, when it closed). */
  answeredAt?: number;
}

const now = () => performance.timeOrigin + performance.now();

/** The MCP server itself, in the process that calls it. */
export async function startMcpAgentServer(): Promise<{
  url: string;
  takeRecords(): McpRequestRecord[];
  close(): Promise<void>;
}> {
  let records: McpRequestRecord[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const newSession = async (): Promise<StreamableHTTPServerTransport> => {
    const server = new McpServer({ name: 'bench-mcp-agent', version: '1.0.0' });
    server.registerTool('echo', { description: 'echo', inputSchema: { text: z.string() } }, () => ({
      content: [{ type: 'text', text: '{"ok":true}' }],
      structuredContent: { ok: true },
    }));
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    await server.connect(transport);
    return transport;
  };

  const handle = async (request: http.IncomingMessage, response: http.ServerResponse): Promise<void> => {
    const record: McpRequestRecord = { httpMethod: request.method ?? '', arrivedAt: now() };
    records.push(record);
    const body = request.method === 'POST' ? await readJson(request) : undefined;
    const message = body as { method?: string; params?: { arguments?: { text?: unknown } } } | undefined;
    record.rpcMethod = message?.method;
    if (message?.method === 'tools/call' && typeof message.params?.arguments?.text === 'string')
      record.text = message.params.arguments.text;
    const sessionId = request.headers['mcp-session-id'] as string | undefined;
    record.sessionId = sessionId;
    response.on('close', () => {
      record.answeredAt = now();
      record.status = response.statusCode;
    });
    let transport = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (!transport) {
      if (sessionId !== undefined || message?.method !== 'initialize')
        return void response.writeHead(404).end('no such session');
      transport = await newSession();
    }
    await transport.handleRequest(request, response, body);
    // An initialize learns its session's id from its answer.
    record.sessionId ??= transport.sessionId;
  };

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    takeRecords() {
      const taken = records;
      records = [];
      return taken;
    },
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close().catch(() => undefined)));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function readJson(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

type ToChild = { type: 'records' } | { type: 'close' };
type FromChild = { type: 'url'; url: string } | { type: 'records'; records: McpRequestRecord[] };

/** The MCP agent in a child process: its URL, its pid for /proc, and its request records on demand. */
export interface McpAgentProcess {
  url: string;
  pid: number;
  /** The records kept since the last take, emptied. */
  takeRecords(): Promise<McpRequestRecord[]>;
  close(): Promise<void>;
}

export async function startMcpAgent(): Promise<McpAgentProcess> {
  // The bench runs under tsx, whose loader the child inherits through execArgv.
  const child: ChildProcess = fork(__filename, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = <T extends FromChild['type']>(type: T) =>
    new Promise<Extract<FromChild, { type: T }>>((resolve, reject) => {
      const onMessage = (message: FromChild) => {
        if (message.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message as Extract<FromChild, { type: T }>);
      };
      const onExit = (code: number | null) => reject(new Error(`the MCP agent exited (${code})`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const send = (message: ToChild) => child.send(message);
  const { url } = await next('url');
  return {
    url,
    pid: child.pid!,
    async takeRecords() {
      const answer = next('records');
      send({ type: 'records' });
      return (await answer).records;
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      send({ type: 'close' });
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

if (require.main === module && process.send) {
  void startMcpAgentServer().then((agent) => {
    process.on('message', (message: ToChild) => {
      if (message.type === 'records') process.send!({ type: 'records', records: agent.takeRecords() });
      else void agent.close().then(() => process.exit(0));
    });
    // The bench ended without closing it.
    process.on('disconnect', () => process.exit(0));
    process.send!({ type: 'url', url: agent.url });
  });
}
