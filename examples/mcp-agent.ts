// An example MCP agent for the agent coordination service: an McpServer of the official MCP SDK over
// Streamable HTTP on node:http, with two tools. An agent registered with `protocol: "mcp"` is called
// over MCP (tools/call) instead of the service's signed POST: `echo` answers structured content,
// which becomes the task's result; `countdown` sends progress notifications, which show as the
// task's `progress` and `message` while it runs.
//
// Run it:   PORT=4100 MCP_AGENT_TOKEN=some-long-secret npx tsx examples/mcp-agent.ts
// and register it with POST /agents, protocol "mcp" and no `capabilities`: the service reads the
// tools from the server itself (the 201 answer lists them, and `warnings` names any it left out).
// `headers` go with every call the service makes to the agent, which is how the agent knows a call
// is the service's:
//   {"name": "mcp-echo", "description": "Echoes over MCP", "defaultPrompt": "What shall I echo?",
//    "protocol": "mcp", "mcpUrl": "http://127.0.0.1:4100/mcp", "chatUrl": "http://127.0.0.1:4100/chat",
//    "headers": {"Authorization": "Bearer some-long-secret"}}
// Then POST /tasks {"agentId": …, "operation": "tools/echo", "params": {"text": "hello"}} ends with
// the result {"text": "hello"}.
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface McpAgentOptions {
  port: number;
  /** 127.0.0.1 unless told otherwise. */
  host?: string;
  /** When given, every request must carry `Authorization: Bearer <token>`. */
  token?: string;
}

/** The agent's tools, on a new McpServer. */
function agentServer(): McpServer {
  const server = new McpServer({ name: 'mcp-echo-agent', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Echoes its text',
      inputSchema: { text: z.string() },
      outputSchema: { text: z.string() },
    },
    ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { text } }),
  );
  server.registerTool(
    'countdown',
    {
      description: 'Counts down the seconds asked for, telling its progress each second',
      inputSchema: { seconds: z.number().int().min(1).max(60) },
      outputSchema: { counted: z.number() },
    },
    async ({ seconds }, extra) => {
      for (let done = 1; done <= seconds; done += 1) {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        // The service asks for progress with a progressToken; a client that does not gets none.
        const progressToken = extra._meta?.progressToken;
        if (progressToken !== undefined)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: done, total: seconds, message: `${seconds - done} s left` },
          });
      }
      return { content: [{ type: 'text', text: `counted ${seconds} s` }], structuredContent: { counted: seconds } };
    },
  );
  return server;
}

/** Whether `authorization` is `Bearer <token>`, compared in constant time. */
function carriesToken(authorization: string | undefined, token: string): boolean {
  const given = Buffer.from(authorization ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function startMcpAgent(options: McpAgentOptions): Promise<http.Server> {
  const host = options.host ?? '127.0.0.1';
  const server = http.createServer((request, response) => {
    const refuse = (status: number) => void response.writeHead(status).end();
    if (new URL(request.url ?? '/', 'http://agent').pathname !== '/mcp') return refuse(404);
    if (options.token !== undefined && !carriesToken(request.headers.authorization, options.token)) return refuse(401);
    // Stateless: a server and a transport for each request, and no session to keep between them.
    const mcp = agentServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => void Promise.all([transport.close(), mcp.close()]));
    mcp
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch(() => (response.headersSent ? response.destroy() : refuse(500)));
  });
  return new Promise((resolve) => server.listen(options.port, host, () => resolve(server)));
}

if (require.main === module) {
  const port = Number(process.env.PORT ?? 4100);
  const host = process.env.HOST ?? '127.0.0.1';
  void startMcpAgent({ port, host, token: process.env.MCP_AGENT_TOKEN || undefined }).then(() =>
    console.log(`MCP agent listening on http://${host}:${port}/mcp`),
  );
}
