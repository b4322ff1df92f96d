import type { Principal } from '../auth/principal';
import type { ValidationProblem } from '../http/validate';
import type { ListedAgent } from '../registry/agent';
import type { AgentDirectory } from '../registry/agent-directory';
import type { ServedTool } from './served-tools';
import { isServable } from './tool-catalog';
import { byName, nameTools } from './tool-names';
import type { VirtualToolEntry } from './virtual-server-schema';

/** The entries of a virtual server that `principal` may use, with the problems of those left out. */
export interface ResolvedEntries {
  served: ServedTool[];
  problems: ValidationProblem[];
}

/**
 * The tools of a virtual server's `entries` that `principal` may use, in name order: each entry
 * whose agent the caller may see and that has the tool, under the entry's name or else the name
 * `/mcp` gives it among the server's agents (tool-names.ts). Of entries served under one name, the
 * first is served. The others are named in `problems`, the path being the entry's in `tools`.
 */
export async function resolveEntries(
  directory: Pick<AgentDirectory, 'findVisibleByIds'>,
  principal: Principal,
  entries: readonly VirtualToolEntry[],
): Promise<ResolvedEntries> {
  const agents = await directory.findVisibleByIds(principal, [...new Set(entries.map((entry) => entry.agentId))]);
  const byId = new Map(agents.map((agent) => [agent.id, agent]));
  const derived = derivedNames(agents, entries);
  const served: ServedTool[] = [];
  const problems: ValidationProblem[] = [];
  const taken = new Set<string>();
  entries.forEach((entry, index) => {
    const agent = byId.get(entry.agentId);
    const tool = agent?.capabilities.tools.find((each) => each.name === entry.tool);
    const name = entry.name ?? derived.get(keyOf(entry.agentId, entry.tool));
    if (!agent) problems.push({ path: `/tools/${index}/agentId`, message: 'names no agent the caller may see' });
    else if (!tool)
      problems.push({ path: `/tools/${index}/tool`, message: `agent ${agent.id} has no tool "${entry.tool}"` });
    else if (!isServable(tool))
      problems.push({
        path: `/tools/${index}/tool`,
        message: 'its inputSchema is not an object schema, which MCP requires',
      });
    else if (name === undefined)
      problems.push({
        path: `/tools/${index}/name`,
        message: 'the name /mcp gives the tool passes 128 characters: give one',
      });
    else if (taken.has(name))
      problems.push({ path: `/tools/${index}/name`, message: `"${name}" names another tool of the server` });
    else {
      taken.add(name);
      served.push({
        name,
        agentId: agent.id,
        tool,
        agent,
        ...(entry.defaults === undefined ? {} : { defaults: entry.defaults }),
      });
    }
  });
  served.sort(byName);
  return { served, problems };
}

/** The names `/mcp` would give the entries' tools among the server's agents, by agent and tool. */
function derivedNames(agents: readonly ListedAgent[], entries: readonly VirtualToolEntry[]): Map<string, string> {
  const wanted = new Set(entries.map((entry) => keyOf(entry.agentId, entry.tool)));
  const named = nameTools(
    agents.map((agent) => ({
      id: agent.id,
      name: agent.name,
      tools: agent.capabilities.tools.filter((tool) => wanted.has(keyOf(agent.id, tool.name))),
    })),
  );
  return new Map(named.map((each) => [keyOf(each.agentId, each.tool.name), each.name]));
}

const keyOf = (agentId: string, tool: string) => `${agentId}/${tool}`;
