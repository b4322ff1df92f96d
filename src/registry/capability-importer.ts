import { AgentProtocol, type Agent, type AgentCapabilities } from './agent';

/** A capability the agent offered that the registry left out, and why. */
export interface ImportWarning {
  /** `tools/<name>`, `resources/<name>` or `prompts/<name>`, as the agent named it. */
  capability: string;
  message: string;
}

/** What the registry read from an agent, and what it left out. */
export interface ImportedCapabilities {
  capabilities: AgentCapabilities;
  warnings: ImportWarning[];
}

/** An agent whose capabilities the registry reads from the agent itself. */
export type ImportTarget = Pick<Agent, 'endpointUrl' | 'headers' | 'protocol'>;

/**
 * Reads an agent's capabilities from the agent: an MCP server's lists, or an A2A agent's card, with
 * the endpoint that card names and whether it offers push notifications. Whatever keeps it from them
 * is 422 CAPABILITY_IMPORT_FAILED.
 */
export type CapabilityImporter = (
  target: ImportTarget,
) => Promise<ImportedCapabilities & Partial<Pick<Agent, 'endpointUrl' | 'pushNotifications'>>>;

/** Whether the registry can read an agent's capabilities from the agent, by the protocol it speaks. */
export const importsCapabilities = (protocol: AgentProtocol | undefined): boolean =>
  protocol === AgentProtocol.MCP || protocol === AgentProtocol.A2A;
