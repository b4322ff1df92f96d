import { Server, type ServerOptions } from '@modelcontextprotocol/sdk/server/index.js';
import type { Implementation } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

/**
 * Builds an Ajv only when a validator is asked for. The SDK's server otherwise builds one, with its
 * formats, in its constructor, for the answers of `elicitInput`, which the service does not call
 * (it sends its elicitations itself: tool-calls.ts); `/mcp` builds a server for every request.
 */
const validatorWhenAsked: jsonSchemaValidator = {
  getValidator: (schema) => new AjvJsonSchemaValidator().getValidator(schema),
};

/** The SDK's server, as `/mcp` builds one per request. */
export function sdkServer(info: Implementation, options: ServerOptions): Server {
  return new Server(info, { ...options, jsonSchemaValidator: validatorWhenAsked });
}
