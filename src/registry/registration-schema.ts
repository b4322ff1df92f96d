import type { Schema } from 'ajv';
import { ParticipantType, type ParticipantRef } from '../auth/participant';
import { AgentProtocol, type Agent } from './agent';

/**
 * JSON Schemas of the registry's requests, checked once at the edge (src/http/validate.ts).
 * Exported by name so the OpenAPI document can be built from them. The schemas agents supply
 * (inputSchema, outputSchema) are only checked to be objects here; UserSchemaCompiler compiles them.
 */

/** A tool's or capability entry's name: the `method` of `capability/method`. */
export const CAPABILITY_NAME_PATTERN = '^[A-Za-z0-9_.-]{1,128}$';

export const REGISTRATION_LIMITS = {
  nameChars: 200,
  textChars: 10_000,
  urlChars: 2_048,
  capabilityEntries: 256,
  sharedWith: 1_000,
  principalIdChars: 256,
  headers: 32,
  headerValueChars: 8_192,
} as const;

/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$";

const text = (maxLength: number) => ({ type: 'string', maxLength: maxLength }) as const;
const nonEmptyText = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength: maxLength }) as const;
/** An http(s) URL with a host: `format: uri` alone admits `http://` and `http:///x`, which no call could reach. */
export const HTTP_URL_FIELD = {
  type: 'string',
  minLength: 1,
  maxLength: REGISTRATION_LIMITS.urlChars,
  format: 'uri',
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]',
} as const;
const SCHEMA_OBJECT = { type: 'object' } as const;
/**
 * A tool's inputSchema: MCP's Tool.inputSchema requires `type: "object"`, since a tool's arguments
 * are always an object. Any other schema would register and then refuse every task's params.
 */
const TOOL_INPUT_SCHEMA = {
  type: 'object',
  required: ['type'],
  properties: { type: { const: 'object', description: 'must be "object": a tool takes an object of arguments' } },
} as const;
const CAPABILITY_NAME = { type: 'string', pattern: CAPABILITY_NAME_PATTERN } as const;

export const TOOL_DEFINITION_SCHEMA = {
  type: 'object',
  required: ['name', 'description', 'inputSchema'],
  properties: {
    name: CAPABILITY_NAME,
    description: text(REGISTRATION_LIMITS.textChars),
    inputSchema: TOOL_INPUT_SCHEMA,
    // MCP tools carry more members (title, outputSchema, ...): kept as sent.
    annotations: { type: 'object', properties: { outputSchema: SCHEMA_OBJECT } },
    outputSchema: SCHEMA_OBJECT,
  },
} as const;

export const CAPABILITY_ENTRY_SCHEMA = {
  type: 'object',
  required: ['name'],
  properties: {
    name: CAPABILITY_NAME,
    description: text(REGISTRATION_LIMITS.textChars),
    inputSchema: SCHEMA_OBJECT,
    uri: { type: 'string', minLength: 1, maxLength: REGISTRATION_LIMITS.urlChars },
  },
} as const;

const entryList = (items: object) =>
  ({ type: 'array', maxItems: REGISTRATION_LIMITS.capabilityEntries, items }) as const;

export const CAPABILITIES_SCHEMA = {
  type: 'object',
  required: ['tools'],
  additionalProperties: false,
  properties: {
    tools: entryList(TOOL_DEFINITION_SCHEMA),
    prompts: entryList(CAPABILITY_ENTRY_SCHEMA),
    resources: entryList(CAPABILITY_ENTRY_SCHEMA),
    experimental: entryList(CAPABILITY_ENTRY_SCHEMA),
  },
} as const;

/** Who may see a thing shared as agents are: an agent, an MCP virtual server. */
export const SHARING_FIELDS = {
  visibility: { type: 'string', enum: ['public', 'private'] },
  sharedWith: {
    type: 'array',
    maxItems: REGISTRATION_LIMITS.sharedWith,
    // A typed entry names a human or an agent; a bare id (the contract's form) is typed on arrival (src/registry/sharing.ts).
    items: {
      anyOf: [
        nonEmptyText(REGISTRATION_LIMITS.principalIdChars),
        {
          type: 'object',
          required: ['type', 'id'],
          additionalProperties: false,
          properties: {
            type: { type: 'string', enum: Object.values(ParticipantType) },
            id: nonEmptyText(REGISTRATION_LIMITS.principalIdChars),
          },
        },
      ],
    },
  },
} as const;

const AGENT_FIELDS = {
  name: nonEmptyText(REGISTRATION_LIMITS.nameChars),
  description: text(REGISTRATION_LIMITS.textChars),
  defaultPrompt: text(REGISTRATION_LIMITS.textChars),
  imageUrl: HTTP_URL_FIELD,
  backgroundImageUrl: HTTP_URL_FIELD,
  websiteUrl: HTTP_URL_FIELD,
  mcpUrl: HTTP_URL_FIELD,
  chatUrl: HTTP_URL_FIELD,
  mcpEndpoint: HTTP_URL_FIELD,
  chatEndpoint: HTTP_URL_FIELD,
  callbackUrl: HTTP_URL_FIELD,
  protocol: { type: 'string', enum: Object.values(AgentProtocol) },
  headers: {
    type: 'object',
    maxProperties: REGISTRATION_LIMITS.headers,
    propertyNames: { pattern: HEADER_NAME_PATTERN },
    // Visible ASCII and spaces only: no line break can smuggle in a header of its own.
    additionalProperties: {
      type: 'string',
      maxLength: REGISTRATION_LIMITS.headerValueChars,
      pattern: '^[\\x20-\\x7E\\t]*$',
    },
  },
  capabilities: CAPABILITIES_SCHEMA,
  ...SHARING_FIELDS,
} as const;

/** POST /agents. `mcpEndpoint`/`chatEndpoint` are aliases of `mcpUrl`/`chatUrl`; an unknown member is refused, as in every request. */
export const AGENT_REGISTRATION_SCHEMA: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'description', 'defaultPrompt'],
  // mcpUrl (or mcpEndpoint) and chatUrl (or chatEndpoint) are required too: checked with the aliases.
  // So are capabilities, but for an MCP agent, which may leave them to be read from its server.
  properties: AGENT_FIELDS,
};

/** PATCH /agents/{id}: any registration fields; the merged agent is checked like a registration. */
export const AGENT_UPDATE_SCHEMA: Schema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: AGENT_FIELDS,
};

/** Digits 1 to 200, as a query string carries them. */
export const LIMIT_PARAMETER = {
  type: 'string',
  pattern: '^(?:[1-9]|[1-9][0-9]|1[0-9][0-9]|200)$',
  description: 'must be a whole number from 1 to 200',
} as const;
export const AFTER_PARAMETER = { type: 'string', format: 'uuid' } as const;

/** GET /agents?limit&after. */
export const AGENT_LIST_QUERY_SCHEMA: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: LIMIT_PARAMETER, after: AFTER_PARAMETER },
};

/** GET /agents/search?query&capability&limit&after (the routes ask for at least one of query and capability). */
export const AGENT_SEARCH_QUERY_SCHEMA: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    query: text(1_000),
    capability: { type: 'string', pattern: '^(?:tools|prompts|resources|experimental)/[A-Za-z0-9_.-]{1,128}$' },
    limit: LIMIT_PARAMETER,
    after: AFTER_PARAMETER,
  },
};

/** An entry of `sharedWith` as a request gives it: typed, or a bare id. */
export type SharingEntry = string | ParticipantRef;

/**
 * A body that passed AGENT_REGISTRATION_SCHEMA (the URLs are checked to be present with their
 * aliases); `Sharing` becomes ParticipantRef once the bare ids are typed.
 */
export interface AgentRegistrationFields<Sharing extends SharingEntry = SharingEntry>
  extends
    Pick<
      Agent,
      | 'name'
      | 'description'
      | 'defaultPrompt'
      | 'imageUrl'
      | 'backgroundImageUrl'
      | 'websiteUrl'
      | 'callbackUrl'
      | 'headers'
    >,
    Partial<Pick<Agent, 'chatUrl' | 'visibility' | 'protocol' | 'capabilities'>> {
  mcpUrl?: string;
  sharedWith?: Sharing[];
  mcpEndpoint?: string;
  chatEndpoint?: string;
}

export type AgentUpdateFields<Sharing extends SharingEntry = SharingEntry> = Partial<AgentRegistrationFields<Sharing>>;

export interface AgentListQuery {
  limit?: string;
  after?: string;
}

export interface AgentSearchQuery extends AgentListQuery {
  query?: string;
  capability?: string;
}
