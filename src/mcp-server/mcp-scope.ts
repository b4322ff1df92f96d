import type { Principal } from '../auth/principal';
import type { AgentDirectory } from '../registry/agent-directory';
import type { ServedTool } from './served-tools';
import { toolCatalog } from './tool-catalog';
import { resolveEntries } from './virtual-catalog';
import type { VirtualServer } from './virtual-servers';

/** What one MCP server of the service serves: `/mcp` every tool the caller may see, `/mcp/{serverId}` a virtual server's. */
export interface McpScope {
  /** The virtual server served; undefined for `/mcp`. A session belongs to the scope that opened it. */
  serverId?: string;
  /** Whether the registry's own tools (registry-tools.ts) are served beside the catalog. */
  withRegistryTools: boolean;
  /** What `initialize` answers as `instructions`. */
  instructions: string;
  /** The tools `principal` may use here, in name order. */
  catalog(principal: Principal): Promise<ServedTool[]>;
}

const TASKS_NOTE = "Each call runs as a durable task of the service, whose id is in the result's _meta.";

/** `/mcp`: the tools of every agent the caller may see, and the registry's own. */
export function registryScope(directory: Pick<AgentDirectory, 'listVisible'>): McpScope {
  return {
    withRegistryTools: true,
    instructions:
      "Each tool is a tool of an agent of the registry, named {agent}.{tool}; each call runs as a durable task of the service, whose id is in the result's _meta.",
    catalog: (principal) => toolCatalog(directory, principal),
  };
}

/** `/mcp/{serverId}`: the server's tools that the caller may use, its description as the instructions. */
export function virtualScope(directory: Pick<AgentDirectory, 'findVisibleByIds'>, server: VirtualServer): McpScope {
  return {
    serverId: server.id,
    withRegistryTools: false,
    instructions: server.description ? `${server.description}\n\n${TASKS_NOTE}` : TASKS_NOTE,
    catalog: async (principal) => (await resolveEntries(directory, principal, server.tools)).served,
  };
}
