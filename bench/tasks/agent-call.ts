import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { callOverMcp, toolVerdict, type McpCallVerdict } from '../../src/agent-calls/mcp-call';
import { McpSession, type McpSessionOptions } from '../../src/agent-calls/mcp-session';
import { AgentProtocol, type Agent } from '../../src/registry/agent';
import { outboundDispatcher } from '../../src/agent-calls/outbound-guard';
import { signWebhook } from '../../src/agent-calls/webhook-signature';

/**
 * A trivial agent on loopback: answers every task at once with a small completed result, noting when
 * each taskId arrived; a task whose params carry `list` gets `{list}` back (the parent of a map).
 */
export async function startTrivialAgent(): Promise<{
  url: string;
  receivedAt: Map<string, number>;
  close(): Promise<void>;
}> {
  const receivedAt = new Map<string, number>();
  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const { taskId, params } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        taskId: string;
        params?: { list?: unknown[] };
      };
      receivedAt.set(taskId, Date.now());
      response.writeHead(200, { 'content-type': 'application/json' });
      const result = params?.list === undefined ? { ok: true } : { list: params.list };
      response.end(JSON.stringify({ status: 'completed', result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    receivedAt,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The registration of the benches' `acs` agent, answering at `url` (startTrivialAgent): its `echo` tool is `Bench_agent.echo` on /mcp. */
export const benchAgentRegistration = (url: string) => ({
  name: 'Bench agent',
  description: 'Answers at once',
  defaultPrompt: 'Hi',
  mcpUrl: url,
  chatUrl: url,
  capabilities: { tools: [ECHO_TOOL] },
});

/** The same signed POST the service's callAgent activity sends, without the service around it. */
export function directCaller(url: string, signingSecret: string) {
  const dispatcher = outboundDispatcher({ allowPrivate: true, connectTimeoutMs: 5_000 });
  return async function callAgentOnce(taskId: string): Promise<unknown> {
    const body = JSON.stringify({ taskId, operation: 'tools/echo', params: { text: 'bench' } });
    const reply = await request(url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', ...signWebhook(signingSecret, `${taskId}-1`, body) },
      body,
    });
    const answer = (await reply.body.json()) as { status: string };
    if (answer.status !== 'completed') throw new Error(`agent answered ${reply.statusCode}`);
    return answer;
  };
}

export type BareActivities = { callAgentOnce: ReturnType<typeof directCaller> };

/** The echo tool as the bench registers it, for both agents. */
export const ECHO_TOOL = {
  name: 'echo',
  description: 'echo',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
};

/** The service's settings of an agent call: its default call timeout, MAX_BODY_BYTES. */
function mcpOptions(): McpSessionOptions {
  return {
    dispatcher: outboundDispatcher({ allowPrivate: true, connectTimeoutMs: 30_000 }),
    timeoutMs: 30_000,
    maxReplyBytes: 1024 * 1024,
  };
}

function ended(verdict: McpCallVerdict): McpCallVerdict {
  if (verdict.kind !== 'completed') throw new Error(`MCP agent answered ${JSON.stringify(verdict)}`);
  return verdict;
}

/** The service's own MCP call (src/agent-calls/mcp-call.ts) without the service around it: a session per call. */
export function directMcpCaller(url: string) {
  const agent = {
    id: 'bench-mcp',
    endpointUrl: url,
    protocol: AgentProtocol.MCP,
    capabilities: { tools: [ECHO_TOOL] },
    version: 1,
  } as unknown as Agent;
  const options = { ...mcpOptions(), onProgress: () => undefined };
  return async (text: string) =>
    ended(await callOverMcp(agent, { category: 'tools', entry: ECHO_TOOL }, { text }, options));
}

/** The same tools/call in one session opened once and kept: what a call costs without the session around it. */
export async function reusedMcpSession(url: string): Promise<{
  call(text: string): Promise<McpCallVerdict>;
  close(): Promise<void>;
}> {
  const session = await McpSession.open({ endpointUrl: url }, mcpOptions());
  return {
    call: async (text) =>
      ended(
        toolVerdict(
          await session.client.request(
            { method: 'tools/call', params: { name: 'echo', arguments: { text } } },
            CallToolResultSchema,
            session.requestOptions({ onprogress: () => undefined, resetTimeoutOnProgress: false }),
          ),
        ),
      ),
    close: () => session.close(),
  };
}
