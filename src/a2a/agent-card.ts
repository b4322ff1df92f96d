import { A2A_PROTOCOL_VERSION, TOOL_SCHEMAS_EXTENSION } from '../agent-calls/a2a-protocol';
import type { Agent } from '../registry/agent';
import { SEARCH_AGENTS_SCHEMA } from '../registry/agent-search';

const JSON_MEDIA = 'application/json';
const TEXT_MEDIA = 'text/plain';

/** How a caller authenticates to the service: its API key, or a person's bearer session token. */
const SECURITY_SCHEMES = {
  apiKey: { apiKeySecurityScheme: { description: "The caller's API key", location: 'header', name: 'X-Api-Key' } },
  bearer: {
    httpAuthSecurityScheme: {
      description: "A person's session token (with X-Identity-Token)",
      scheme: 'Bearer',
      bearerFormat: 'JWT',
    },
  },
};
const SECURITY_REQUIREMENTS = [{ schemes: { apiKey: { list: [] } } }, { schemes: { bearer: { list: [] } } }];

/** A2A 1.0's AgentCard, in its JSON form, for an agent of the registry: `origin` is the service's. */
export function agentCard(agent: Agent, origin: string): Record<string, unknown> {
  const tools = agent.capabilities.tools;
  return {
    name: agent.name,
    description: agent.description,
    version: String(agent.version),
    supportedInterfaces: [
      { url: `${origin}/a2a/${agent.id}`, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    provider: { organization: 'Agent coordination service', url: origin },
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extensions: [toolSchemasExtension(Object.fromEntries(tools.map((tool) => [tool.name, tool.inputSchema])))],
    },
    securitySchemes: SECURITY_SCHEMES,
    securityRequirements: SECURITY_REQUIREMENTS,
    defaultInputModes: [JSON_MEDIA],
    defaultOutputModes: [JSON_MEDIA],
    skills: tools.map((tool) => ({
      id: tool.name,
      name: typeof tool.title === 'string' ? tool.title : tool.name,
      description: tool.description,
      tags: ['tool'],
    })),
  };
}

/** The id of the directory's one skill. */
export const SEARCH_AGENTS_SKILL = 'search-agents';

/** The card of the service itself: a directory, whose one skill is searching the registry, at `POST /a2a`. */
export function serviceCard(origin: string): Record<string, unknown> {
  return {
    name: 'Agent coordination service',
    description:
      'A registry of agents with durable task execution behind it. Its own endpoint finds agents; each agent has its own card at /agents/{agentId}/.well-known/agent-card.json.',
    version: '1',
    supportedInterfaces: [{ url: `${origin}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION }],
    provider: { organization: 'Agent coordination service', url: origin },
    documentationUrl: `${origin}/openapi.json`,
    capabilities: {
      streaming: false,
      pushNotifications: false,
      extensions: [toolSchemasExtension({ [SEARCH_AGENTS_SKILL]: SEARCH_AGENTS_SCHEMA })],
    },
    securitySchemes: SECURITY_SCHEMES,
    securityRequirements: SECURITY_REQUIREMENTS,
    defaultInputModes: [JSON_MEDIA, TEXT_MEDIA],
    defaultOutputModes: [JSON_MEDIA, TEXT_MEDIA],
    skills: [
      {
        id: SEARCH_AGENTS_SKILL,
        name: 'Search the registry',
        description:
          'Finds the agents the caller may see: a text part is the query; a data part {skill: "search-agents", params} also takes capability, limit and after. Answers a message whose data part lists each agent with its Agent Card and A2A endpoint.',
        tags: ['registry'],
        examples: ['translate', '{"skill": "search-agents", "params": {"capability": "tools/translate"}}'],
        inputModes: [TEXT_MEDIA, JSON_MEDIA],
        outputModes: [JSON_MEDIA, TEXT_MEDIA],
      },
    ],
  };
}

/** The extension that carries each skill's JSON Schema, which A2A's skills have no place for. */
function toolSchemasExtension(inputSchemas: Record<string, unknown>) {
  return {
    uri: TOOL_SCHEMAS_EXTENSION,
    description: "The JSON Schema of each skill's params, by skill id",
    required: false,
    params: { inputSchemas },
  };
}
