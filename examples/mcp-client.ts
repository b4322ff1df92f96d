// An MCP client of the agent coordination service, with the official MCP SDK: /mcp is one MCP
// server whose tools are those of every agent the key may see, named {agent}.{tool}, beside the
// registry's own (search_agents, run_composition, get_task). Each call runs as a durable task.
//
// Run it:   ACS_URL=http://127.0.0.1:3000 ACS_KEY=… npx tsx examples/mcp-client.ts [tool] [json arguments]
// Without a tool it lists the tools; with one it calls it and prints the result, progress on the way.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';

export interface McpClientOptions {
  /** Base URL of the coordination service. */
  serviceUrl: string;
  /** An API key: the admin's, a service's, an agent's. */
  apiKey: string;
}

/** A client connected to the service's /mcp with `apiKey` (sent as Authorization: Bearer). */
export async function connectToService({ serviceUrl, apiKey }: McpClientOptions): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${serviceUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
  });
  const client = new Client({ name: 'acs-example-client', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** Every tool the client may call, page after page. */
export async function listTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** Calls `name` and waits for its task to end, however long that takes; `onProgress` hears the task's progress. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  onProgress: (message: string) => void = () => undefined,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, {
    onprogress: ({ progress, total, message }) => onProgress(`${progress}/${total ?? '?'} ${message ?? ''}`),
    // A task may run for hours: the request waits for it, as long as progress keeps coming.
    resetTimeoutOnProgress: true,
    timeout: 60 * 60_000,
  })) as CallToolResult;
}

if (require.main === module) {
  const [name, json] = process.argv.slice(2);
  const options = { serviceUrl: process.env.ACS_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.ACS_KEY ?? '' };
  void (async () => {
    const client = await connectToService(options);
    try {
      if (name === undefined) {
        for (const tool of await listTools(client)) console.log(`${tool.name}  ${tool.description ?? ''}`);
      } else {
        const result = await callTool(client, name, json ? (JSON.parse(json) as Record<string, unknown>) : {}, (line) =>
          console.error(`progress ${line}`),
        );
        console.log(JSON.stringify(result.structuredContent ?? result.content, null, 2));
        if (result.isError) process.exitCode = 1;
      }
    } finally {
      await client.close();
    }
  })();
}
