/** MCP's tool names (2025-11-25): 1 to 128 of letters, digits, `_`, `-` and `.`. */
const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** How much of an agent's name its tools' names keep: room is left for the tool and a clash's suffix. */
const AGENT_PART_CHARS = 48;
/** How much of the agentId tells apart agents whose names read the same. */
const ID_PART_CHARS = 8;

/** One tool of one agent, as the caller's catalog names it. */
export interface NamedTool<T> {
  name: string;
  agentId: string;
  tool: T;
}

/** An agent's name as the first part of its tools' names: the characters MCP allows, the others `_`. */
export function agentPartOf(agentName: string): string {
  const part = agentName
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, AGENT_PART_CHARS);
  return part || 'agent';
}

/**
 * Names every tool of `agents` `{agent}.{tool}`, unique among them: agents whose names read the
 * same (after agentPartOf) all add the start of their agentId, `{agent}-{id}.{tool}`, and the full
 * agentId when even that is shared. The names depend only on the set of agents, not on their order,
 * so every process and every request names a tool alike. A tool whose name would pass 128
 * characters is left out.
 */
export function nameTools<T extends { name: string }>(
  agents: ReadonlyArray<{ id: string; name: string; tools: readonly T[] }>,
): Array<NamedTool<T>> {
  const sharing = new Map<string, string[]>();
  for (const agent of agents) {
    const part = agentPartOf(agent.name);
    sharing.set(part, [...(sharing.get(part) ?? []), agent.id]);
  }
  const named: Array<NamedTool<T>> = [];
  for (const agent of agents) {
    const part = agentPartOf(agent.name);
    const ids = sharing.get(part) ?? [];
    const prefix = ids.length === 1 ? part : `${part}-${distinctIdPart(agent.id, ids)}`;
    for (const tool of agent.tools) {
      const name = `${prefix}.${tool.name}`;
      if (MCP_TOOL_NAME.test(name)) named.push({ name, agentId: agent.id, tool });
    }
  }
  return named.sort(byName);
}

/** Orders tools by name, code unit by code unit: the order of `tools/list` and of its cursor. */
export const byName = (a: { name: string }, b: { name: string }): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

/** The start of `id` that no other of `ids` shares, else the whole id. */
function distinctIdPart(id: string, ids: readonly string[]): string {
  const short = id.slice(0, ID_PART_CHARS);
  return ids.some((other) => other !== id && other.slice(0, ID_PART_CHARS) === short) ? id : short;
}
