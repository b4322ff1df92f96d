import { agentCardImporter } from '../a2a/card-import';
import { capabilityImporter as mcpCapabilityImporter, type ImportedCapabilities } from '../mcp/capability-import';
import type { McpSessionOptions } from '../mcp/session';
import { AgentProtocol, type Agent } from './agent';
import type { UserSchemaCompiler } from './user-schemas';

/** An agent whose capabilities the registry reads from the agent itself. */
export type ImportTarget = Pick<Agent, 'mcpUrl' | 'headers' | 'protocol'>;

/**
 * Reads an agent's capabilities from the agent: an MCP server's lists, or an A2A agent's card, with
 * the endpoint that card names (`mcpUrl`). Whatever keeps it from them is 422 CAPABILITY_IMPORT_FAILED.
 */
export type CapabilityImporter = (target: ImportTarget) => Promise<ImportedCapabilities & { mcpUrl?: string }>;

/** Whether the registry can read an agent's capabilities from the agent, by the protocol it speaks. */
export const importsCapabilities = (protocol: AgentProtocol | undefined): boolean =>
  protocol === AgentProtocol.MCP || protocol === AgentProtocol.A2A;

export function capabilityImporter(options: McpSessionOptions, compiler: UserSchemaCompiler): CapabilityImporter {
  const mcp = mcpCapabilityImporter(options, compiler);
  const a2a = agentCardImporter(options, compiler);
  return (target) => (target.protocol === AgentProtocol.A2A ? a2a(target) : mcp(target));
}
