/** The A2A protocol version the cards and the endpoint speak. */
export const A2A_PROTOCOL_VERSION = '1.0';

/**
 * The extension whose params carry each skill's JSON Schema: A2A 1.0's AgentSkill has no place for
 * one, and a caller needs it to build the data part of a SendMessage (docs/a2a.md).
 */
export const TOOL_SCHEMAS_EXTENSION = 'https://agent-coordination-service.dev/a2a/extensions/tool-schemas/v1';
