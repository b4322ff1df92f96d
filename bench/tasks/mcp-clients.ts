import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * MCP clients of the official SDK, one per concurrent caller, each in a session of its own opened
 * before it is measured: what a set of MCP hosts (assistants, agent frameworks) connected to one
 * server looks like. A call takes whichever client is free, so a caller never waits for another's
 * session.
 */
export interface McpClientPool {
  /** `tools/call` of `tool` with `{text}`, on a free client; throws unless it answered a result that is not an error. */
  call(tool: string, text: string): Promise<CallToolResult>;
  close(): Promise<void>;
}

export async function openMcpClients(
  url: string,
  count: number,
  headers: Record<string, string> = {},
): Promise<McpClientPool> {
  const clients = await Promise.all(
    Array.from({ length: count }, async () => {
      const client = new Client({ name: 'acs-bench', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
      return client;
    }),
  );
  const free = [...clients];
  return {
    async call(tool, text) {
      const client = free.pop();
      if (!client) throw new Error(`more than ${count} calls at once`);
      try {
        const result = (await client.callTool({ name: tool, arguments: { text } })) as CallToolResult;
        if (result.isError) throw new Error(`${tool} answered an error: ${JSON.stringify(result.content)}`);
        return result;
      } finally {
        free.push(client);
      }
    },
    close: async () => void (await Promise.all(clients.map((client) => client.close().catch(() => undefined)))),
  };
}
