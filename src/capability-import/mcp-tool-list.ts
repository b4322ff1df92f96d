import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { PaginatedResultSchema, ToolSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';

/**
 * One page of an MCP server's `tools/list`, each tool read on its own: the SDK's `listTools`
 * refuses the whole page when one tool breaks MCP's rules (an `inputSchema` whose `type` is not
 * "object", say), and with it the whole import. Here that tool is handed to `leaveOut`, which names
 * it in the warnings as it names the tools that fail the registry's own checks.
 */
export async function toolsPage(
  client: Client,
  cursor: string | undefined,
  options: RequestOptions,
  leaveOut: (name: string, problem: string) => void,
): Promise<{ tools: Tool[]; nextCursor?: string }> {
  const answer = await client.request({ method: 'tools/list', params: { cursor } }, PaginatedResultSchema, options);
  if (!Array.isArray(answer.tools)) throw new Error('its tools/list answer holds no tools list');
  const tools: Tool[] = [];
  for (const entry of answer.tools as unknown[]) {
    const parsed = ToolSchema.safeParse(entry);
    if (parsed.success) tools.push(withSchemasAsSent(parsed.data, entry as Tool));
    else leaveOut(nameOf(entry), `not an MCP tool: ${problemsOf(parsed.error)}`);
  }
  return { tools, ...(answer.nextCursor === undefined ? {} : { nextCursor: answer.nextCursor }) };
}

const nameOf = (entry: unknown): string => String((entry as { name?: unknown } | null)?.name);

/**
 * `tool` with its schemas as the server wrote them: the SDK's parse puts the members it knows
 * (`type`, `properties`, `required`) first, and a schema is kept and served as it was sent.
 */
function withSchemasAsSent(tool: Tool, sent: Tool): Tool {
  return {
    ...tool,
    inputSchema: sent.inputSchema,
    ...(sent.outputSchema === undefined ? {} : { outputSchema: sent.outputSchema }),
  };
}

/** The SDK's problems as the registry words its own, `/path message; …`. */
function problemsOf(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): string {
  return error.issues.map((issue) => `/${issue.path.map(String).join('/')} ${issue.message}`).join('; ');
}
