import { agentCardImporter } from '../capability-import/a2a-card';
import { capabilityImporter as mcpCapabilityImporter } from '../capability-import/mcp-server';
import type { McpSessionOptions } from '../agent-calls/mcp-session';
import { AgentProtocol } from '../registry/agent';
import type { CapabilityImporter } from '../registry/capability-importer';
import type { SchemaChecks } from '../user-schemas/schema-checks';

/** Reads capabilities over the protocol the agent speaks: an A2A agent's card, else an MCP server's lists. */
export function capabilityImporter(options: McpSessionOptions, checks: SchemaChecks): CapabilityImporter {
  const mcp = mcpCapabilityImporter(options, checks);
  const a2a = agentCardImporter(options, checks);
  return (target) => (target.protocol === AgentProtocol.A2A ? a2a(target) : mcp(target));
}
