import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import { testStack } from './test-stack';

/**
 * The official SDK's clients on the service's `/mcp`, for a file's tests: each call opens a new
 * session with `apiKey` (the admin's unless given) at `baseUrl` (the stack's unless given); all are
 * closed after each test.
 */
export function useMcpClients(): (options?: {
  apiKey?: string;
  baseUrl?: string;
  capabilities?: ClientCapabilities;
}) => Promise<Client> {
  const open: Client[] = [];
  afterEach(async () => {
    for (const client of open.splice(0)) await client.close().catch(() => undefined);
  });
  return async ({ apiKey, baseUrl, capabilities = {} } = {}) => {
    const stack = testStack();
    const client = new Client({ name: 'mcp-tasks-test', version: '1.0.0' }, { capabilities });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${baseUrl ?? stack.baseUrl}/mcp`), {
        requestInit: { headers: { 'x-api-key': apiKey ?? stack.adminKey } },
      }),
    );
    open.push(client);
    return client;
  };
}

/**
 * Every tool of every page of `client`'s tools/list. A full suite's stack holds hundreds of public
 * agents, so a tool named late in the order may sit past the first page.
 */
export async function listAllTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return tools;
}
