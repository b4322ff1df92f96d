/** A JSON Schema as an agent supplied it. Compiled by Ajv (strict) before it is accepted. */
export type JsonSchema = Record<string, unknown>;
