import { participantOf, sameParticipant, type ParticipantRef } from '../auth/participant';
import { PrincipalKind, samePrincipal, type Principal } from '../auth/principal';

import type { JsonSchema } from '../user-schemas/json-schema';

export type { JsonSchema };

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /** MCP's place for the schema of `structuredContent`; `annotations.outputSchema` is the contract's. */
  outputSchema?: JsonSchema;
  annotations?: { outputSchema?: JsonSchema; [member: string]: unknown };
  /** More members of an MCP tool (`title`, `execution`, ...), kept as sent. */
  [member: string]: unknown;
}

/** An entry of `prompts`, `resources` or `experimental` (docs/api.md, "Agents"). */
export interface CapabilityEntry {
  name: string;
  description?: string;
  inputSchema?: JsonSchema;
  /** Resources of MCP agents: what `resources/read` reads. `resources/<name>` and `resources/<uri>` both name the entry. */
  uri?: string;
}

export interface AgentCapabilities {
  tools: ToolDefinition[];
  prompts?: CapabilityEntry[];
  resources?: CapabilityEntry[];
  experimental?: CapabilityEntry[];
}

/** The capability categories an operation `capability/method` may name. */
export const CAPABILITY_CATEGORIES = ['tools', 'prompts', 'resources', 'experimental'] as const;
export type CapabilityCategory = (typeof CAPABILITY_CATEGORIES)[number];

export type Visibility = 'public' | 'private';

/**
 * How the service calls an agent at its endpoint: `acs`, the service's own signed POST (docs/agents.md),
 * `mcp`, the Model Context Protocol over Streamable HTTP, which any MCP server speaks, or `a2a`, the
 * Agent2Agent protocol's JSON-RPC binding (docs/a2a.md), which any A2A agent speaks.
 */
export const AgentProtocol = { ACS: 'acs', MCP: 'mcp', A2A: 'a2a' } as const;
export type AgentProtocol = (typeof AgentProtocol)[keyof typeof AgentProtocol];

/** An agent as the service works with it. */
export interface Agent {
  id: string;
  name: string;
  description: string;
  defaultPrompt: string;
  imageUrl?: string;
  backgroundImageUrl?: string;
  websiteUrl?: string;
  /** Where the service calls the agent, whatever its protocol: `mcpUrl` on the wire and in the store. */
  endpointUrl: string;
  chatUrl: string;
  callbackUrl?: string;
  protocol: AgentProtocol;
  /**
   * Sent with every MCP or A2A call to the endpoint and nowhere else (an `Authorization` bearer, say): the
   * owner's secrets, sealed at rest and shown by no view but by name.
   */
  headers?: Record<string, string>;
  capabilities: AgentCapabilities;
  /** An A2A agent whose card offers push notifications (`capabilities.pushNotifications`): asked to push its tasks' updates. */
  pushNotifications?: true;
  visibility: Visibility;
  /** Who else may see it when private: typed, so a human whose `sub` equals an agentId is not that agent. */
  sharedWith: ParticipantRef[];
  /** The service or human that registered it; undefined when an admin did. */
  owner?: Principal;
  /** `whsec_` + base64 of 32 bytes: signs the service's calls and callbacks to this agent. */
  signingSecret: string;
  /** Increases on every change, so anything compiled from the capabilities can be cached by (id, version). */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** An agent as lists keep it in memory and show it: without its secrets, its headers by name only. */
export type ListedAgent = Omit<Agent, 'signingSecret' | 'headers'> & { headerNames: string[] };

/**
 * An agent as MongoDB stores it. `capabilities` is kept as JSON text: schemas hold keys such as
 * `$ref` or `a.b` that stores refuse as field names in places (src/store/mongo.ts). What queries need
 * from the capabilities is copied into plain fields beside it.
 */
export interface AgentDocument extends Omit<Agent, 'id' | 'endpointUrl' | 'capabilities' | 'protocol' | 'headers'> {
  _id: string;
  /** The agent's endpoint, under the name the API gives it. */
  mcpUrl: string;
  capabilities: string;
  /** Absent on agents registered before protocols: those speak `acs`. */
  protocol?: AgentProtocol;
  /** The headers as JSON, sealed by src/auth/secret-box.ts. */
  headers?: string;
  /** Sealed by src/auth/secret-box.ts; `whsec_…` as it is where a version before sealing stored it. */
  signingSecret: string;
  /** Every `capability/method` the agent registered, e.g. `tools/translate`: serves capability filters. */
  operations: string[];
  /** Normalised words of name, description and tool names and descriptions: serves search (agent-directory.ts). */
  searchTokens: string[];
  /** The same words by the field they come from, so that search ranks candidates without reading their capabilities. */
  searchFields: Record<SearchField, string[]>;
}

export type SearchField = 'name' | 'toolName' | 'description' | 'toolDescription';

/** Whether `principal` may see `agent`: public agents all; private ones their owner, those shared with, admins and the agent itself. */
export function canSee(
  principal: Principal | undefined,
  agent: Pick<Agent, 'id' | 'visibility' | 'sharedWith' | 'owner'>,
): boolean {
  return canSeeShared(principal, agent) || (principal !== undefined && isTheAgent(principal, agent));
}

/**
 * Whether `principal` may see a thing shared as agents are (an agent, an MCP virtual server): public
 * ones all; private ones their owner, those shared with and admins.
 */
export function canSeeShared(
  principal: Principal | undefined,
  shared: Pick<Agent, 'visibility' | 'sharedWith' | 'owner'>,
): boolean {
  if (shared.visibility === 'public') return true;
  if (!principal) return false;
  if (principal.kind === PrincipalKind.ADMIN) return true;
  const viewer = participantOf(principal);
  return (
    isOwner(principal, shared) ||
    (viewer !== undefined && shared.sharedWith.some((entry) => sameParticipant(entry, viewer)))
  );
}

/** `agent` when it exists and `principal` may see it; null otherwise, so that callers answer 404 either way. */
export function ifVisible(principal: Principal | undefined, agent: Agent | null): Agent | null {
  return agent && canSee(principal, agent) ? agent : null;
}

/** Whether `principal` is `agent` itself: only its agent key is; a human whose `sub` equals the agentId is not. */
export function isTheAgent(principal: Principal, agent: Pick<Agent, 'id'>): boolean {
  return principal.kind === PrincipalKind.AGENT && principal.id === agent.id;
}

export const isOwner = (principal: Principal, agent: Pick<Agent, 'owner'>): boolean =>
  agent.owner !== undefined && samePrincipal(principal, agent.owner);

/** Whether `principal` may change or delete `agent`: its owner and admins. */
export function canManageAgent(principal: Principal, agent: Pick<Agent, 'owner'>): boolean {
  return principal.kind === PrincipalKind.ADMIN || isOwner(principal, agent);
}
