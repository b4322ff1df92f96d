import { A2A_PROTOCOL_VERSION, TOOL_SCHEMAS_EXTENSION } from '../agent-calls/a2a-protocol';
import type { Agent } from '../registry/agent';

const JSON_MEDIA = 'application/json';

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
      extensions: [
        {
          uri: TOOL_SCHEMAS_EXTENSION,
          description: "The JSON Schema of each skill's params, by skill id",
          required: false,
          params: { inputSchemas: Object.fromEntries(tools.map((tool) => [tool.name, tool.inputSchema])) },
        },
      ],
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

/** The card of the service itself: a directory, whose one skill is searching the registry. */
export function serviceCard(origin: string): Record<string, unknown> {
  return {
    name: 'Agent coordination service',
    description:
      'A registry of agents with durable task execution behind it. Each agent has its own card at /agents/{agentId}/.well-known/agent-card.json.',
    version: '1',
    supportedInterfaces: [],
    provider: { organization: 'Agent coordination service', url: origin },
    documentationUrl: `${origin}/openapi.json`,
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: SECURITY_SCHEMES,
    securityRequirements: SECURITY_REQUIREMENTS,
    defaultInputModes: [JSON_MEDIA],
    defaultOutputModes: [JSON_MEDIA],
    skills: [
      {
        id: 'search-agents',
        name: 'Search the registry',
        description:
          'GET /agents?q=…&operation=… lists the agents a caller may see, each with the URL of its Agent Card.',
        tags: ['registry'],
      },
    ],
  };
}
