import type { Principal } from '../auth/principal';
import type { AgentDirectory } from '../registry/agent-directory';
import type { Freshness } from '../store/live-copy';
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
  /** Names what the catalog depends on besides the agent directory: equal, and only the directory may have changed it. */
  revision: string;
  /** The tools `principal` may use here, in name order, from the directory as fresh as `freshness` asks (every change recorded before the call by default). */
  catalog(principal: Principal, freshness?: Freshness): Promise<ServedTool[]>;
}

const TASKS_NOTE = "Each call runs as a durable task of the service, whose id is in the result's _meta.";

/** `/mcp`: the tools of every agent the caller may see, and the registry's own. */
export function registryScope(directory: Pick<AgentDirectory, 'listVisible'>): McpScope {
  return {
    withRegistryTools: true,
    instructions:
      "Each tool is a tool of an agent of the registry, named {agent}.{tool}; each call runs as a durable task of the service, whose id is in the result's _meta.",
    revision: 'registry',
    catalog: (principal, freshness) => toolCatalog(directory, principal, freshness),
  };
}

/** `/mcp/{serverId}`: the server's tools that the caller may use, its description as the instructions. */
export function virtualScope(
  directory: Pick<AgentDirectory, 'findVisibleByIds' | 'catchUp'>,
  server: VirtualServer,
): McpScope {
  return {
    serverId: server.id,
    withRegistryTools: false,
    instructions: server.description ? `${server.description}\n\n${TASKS_NOTE}` : TASKS_NOTE,
    // Each change of the server makes a new version of it (virtual-server-routes.ts).
    revision: `${server.id}@${server.version}`,
    catalog: async (principal, freshness) => {
      // The directory's agents as lists show them are current only once it caught up.
      await directory.catchUp(freshness);
      return (await resolveEntries(directory, principal, server.tools)).served;
    },
  };
}
