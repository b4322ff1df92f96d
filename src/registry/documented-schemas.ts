import type { Schema } from 'ajv';
import { AGENT_REGISTRATION_SCHEMA, AGENT_UPDATE_SCHEMA } from './registration-schema';

/** The endpoints POST /agents requires, each with the alias the server accepts in its place. */
const REQUIRED_ENDPOINTS = { mcpUrl: 'mcpEndpoint', chatUrl: 'chatEndpoint' } as const;

/** What the registration's members mean beyond their types, for the readers of the document. */
const FIELD_DESCRIPTIONS: Record<string, string> = {
  protocol:
    'How the service calls the agent at mcpUrl: "acs" (default), its signed POST; "mcp", the Model Context Protocol over Streamable HTTP; "a2a", A2A 1.0\'s JSON-RPC binding (mcpUrl the endpoint, or the Agent Card\'s URL)',
  headers:
    'Protocols "mcp" and "a2a" only: sent with every MCP or A2A request to mcpUrl and nowhere else (an Authorization bearer token, say). Sealed at rest and never shown again: agent records name them in headerNames. A PATCH replaces them whole; {} removes them',
};

type ObjectSchema = { required?: string[]; properties: Record<string, object> };

/** The registration's members, each with its description; the schemas the server checks stay as they are. */
function describedFields(schema: ObjectSchema): Record<string, object> {
  const properties = { ...schema.properties };
  for (const [name, description] of Object.entries(FIELD_DESCRIPTIONS))
    properties[name] = { ...properties[name], description };
  // Sent, never read back: no answer carries the values.
  properties.headers = { ...properties.headers, writeOnly: true };
  return properties;
}

/**
 * POST /agents as documented. The server requires mcpUrl and chatUrl after folding their aliases
 * into them, and capabilities unless the agent speaks MCP or A2A (src/registry/registration.ts), which
 * AGENT_REGISTRATION_SCHEMA leaves to that code; clients read the schema, so the document says both
 * there, and marks the aliases deprecated.
 */
export function documentedRegistrationSchema(): Schema {
  const schema = AGENT_REGISTRATION_SCHEMA as ObjectSchema & { required: string[] };
  const properties = describedFields(schema);
  properties.capabilities = {
    ...properties.capabilities,
    description:
      'Required unless protocol is "mcp" or "a2a": an MCP agent registered without them gets those its server lists (tools/list, resources/list, prompts/list), an A2A agent its Agent Card\'s skills as tools',
  };
  for (const [name, alias] of Object.entries(REQUIRED_ENDPOINTS)) {
    properties[alias] = {
      ...properties[alias],
      deprecated: true,
      description: `Alias of ${name}, accepted in its place`,
    };
  }
  return {
    ...schema,
    required: [...schema.required, ...Object.keys(REQUIRED_ENDPOINTS)],
    properties,
    if: { required: ['protocol'], properties: { protocol: { enum: ['mcp', 'a2a'] } } },
    else: { required: ['capabilities'] },
  };
}

/** PATCH /agents/{agentId} as documented: the update's members, described as a registration's are. */
export function documentedUpdateSchema(): Schema {
  const schema = AGENT_UPDATE_SCHEMA as ObjectSchema;
  return { ...schema, properties: describedFields(schema) };
}
