import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/principal';
import type { ListedAgent, ToolDefinition } from '../registry/agent';
import type { AgentDirectory } from '../registry/agent-directory';
import type { Freshness } from '../store/live-copy';
import { nameTools, type NamedTool } from './tool-names';

/** The `_meta` key that names the agent behind a tool, and the task behind a result (reverse DNS, as MCP asks). */
export const META_AGENT = 'dev.agent-coordination-service/agent';
export const META_TASK = 'dev.agent-coordination-service/taskId';

/** Agents read per page while the catalog is built: the directory serves them from memory. */
const PAGE = 500;
/** The most agents one catalog holds: a caller who may see more gets the first ones by agentId. */
export const MAX_CATALOG_AGENTS = 10_000;

/** A tool of the caller's catalog, with the agent that serves it. */
export type CatalogTool = NamedTool<ToolDefinition> & { agent: ListedAgent };

const isObjectSchema = (schema: unknown): boolean =>
  typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'object';

/**
 * Whether MCP can list the tool: its `inputSchema` is an object schema, as MCP's Tool requires. The
 * registration rules ask for one, but an agent stored before them, or whose capabilities were read
 * from elsewhere, may have another; one such tool must not break the list for every caller, whose
 * client checks the whole answer.
 */
export const isServable = (tool: ToolDefinition): boolean => isObjectSchema(tool.inputSchema);

/** Every tool of every agent `principal` may see, named for MCP (tool-names.ts), in name order; as fresh as `freshness` asks (every change recorded before the call by default). */
export async function toolCatalog(
  directory: Pick<AgentDirectory, 'listVisible'>,
  principal: Principal,
  freshness?: Freshness,
): Promise<CatalogTool[]> {
  const agents: ListedAgent[] = [];
  for (let after: string | undefined; agents.length < MAX_CATALOG_AGENTS;) {
    const page = await directory.listVisible(principal, { limit: PAGE, after }, undefined, freshness);
    agents.push(...page);
    if (page.length < PAGE) break;
    after = page[page.length - 1].id;
  }
  const byId = new Map(agents.map((agent) => [agent.id, agent]));
  const servable = agents.map((agent) => ({
    id: agent.id,
    name: agent.name,
    tools: agent.capabilities.tools.filter(isServable),
  }));
  return nameTools(servable).map((named) => ({ ...named, agent: byId.get(named.agentId)! }));
}

/** A tool as `tools/list` gives it: the agent's definition under its catalog name, the agent in `_meta`. */
export function mcpTool({ name, tool, agent }: CatalogTool): Tool {
  const outputSchema = tool.outputSchema ?? tool.annotations?.outputSchema;
  return {
    name,
    title: typeof tool.title === 'string' ? tool.title : `${agent.name}: ${tool.name}`,
    // An empty description tells a model nothing, and MCP's checks take it for a missing one.
    description: tool.description || `Tool ${tool.name} of agent ${agent.name}`,
    inputSchema: tool.inputSchema as Tool['inputSchema'],
    // MCP's outputSchema is an object schema too: any other is left out rather than break the list.
    ...(isObjectSchema(outputSchema) ? { outputSchema: outputSchema as Tool['outputSchema'] } : {}),
    // Every call is a task: a client may follow it as an MCP task (task-requests.ts) or wait for its result.
    execution: { taskSupport: 'optional' },
    _meta: { [META_AGENT]: { agentId: agent.id, name: agent.name, version: agent.version, tool: tool.name } },
  };
}
