import type { Schema } from 'ajv';
import type { Visibility } from '../registry/agent';
import {
  CAPABILITY_NAME_PATTERN,
  REGISTRATION_LIMITS,
  SHARING_FIELDS,
  type SharingEntry,
} from '../registry/registration-schema';

/**
 * JSON Schemas of the requests of `/mcp-servers`, checked once at the edge (src/http/validate.ts),
 * and exported by name so that the OpenAPI document is built from them.
 */

export const VIRTUAL_SERVER_LIMITS = { tools: 256, defaults: 256 } as const;

/** One tool of a virtual server: a tool of an agent, under the name the owner gives it, with defaults of its arguments. */
export interface VirtualToolEntry {
  agentId: string;
  /** The agent's own name of the tool: `tools/{tool}` is the operation a call runs. */
  tool: string;
  /** The name the server lists it by; absent, the name `/mcp` would give it (tool-names.ts). */
  name?: string;
  /** Arguments the call gets unless the caller gives them: the caller's arguments win, member by member. */
  defaults?: Record<string, unknown>;
}

const TOOL_ENTRY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['agentId', 'tool'],
  properties: {
    agentId: { type: 'string', format: 'uuid' },
    tool: {
      type: 'string',
      pattern: CAPABILITY_NAME_PATTERN,
      description: "must be the name of one of the agent's tools",
    },
    name: {
      type: 'string',
      pattern: CAPABILITY_NAME_PATTERN,
      description: 'must be an MCP tool name: 1 to 128 letters, digits, "_", "-" or "."',
    },
    defaults: { type: 'object', maxProperties: VIRTUAL_SERVER_LIMITS.defaults },
  },
} as const;

const VIRTUAL_SERVER_FIELDS = {
  name: { type: 'string', minLength: 1, maxLength: REGISTRATION_LIMITS.nameChars },
  description: { type: 'string', maxLength: REGISTRATION_LIMITS.textChars },
  tools: { type: 'array', minItems: 1, maxItems: VIRTUAL_SERVER_LIMITS.tools, items: TOOL_ENTRY_SCHEMA },
  ...SHARING_FIELDS,
} as const;

/** POST /mcp-servers. */
export const VIRTUAL_SERVER_CREATE_SCHEMA: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'tools'],
  properties: VIRTUAL_SERVER_FIELDS,
};

/** PATCH /mcp-servers/{serverId}: the fields given replace those stored, `tools` whole. */
export const VIRTUAL_SERVER_UPDATE_SCHEMA: Schema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: VIRTUAL_SERVER_FIELDS,
};

/** A body that passed VIRTUAL_SERVER_CREATE_SCHEMA. */
export interface VirtualServerFields {
  name: string;
  description?: string;
  tools: VirtualToolEntry[];
  visibility?: Visibility;
  sharedWith?: SharingEntry[];
}

/** A body that passed VIRTUAL_SERVER_UPDATE_SCHEMA. */
export type VirtualServerUpdate = Partial<VirtualServerFields>;
