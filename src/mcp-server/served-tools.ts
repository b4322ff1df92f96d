import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { mcpTool, type CatalogTool } from './tool-catalog';

/** A tool as an MCP server of the service serves it: a catalog tool, with the defaults of its arguments a virtual server gives it. */
export type ServedTool = CatalogTool & { defaults?: Record<string, unknown> };

/**
 * A served tool as `tools/list` gives it. Arguments with a default are no longer required of the
 * caller, and the schema of each shows its default, so that a model knows what it may leave out.
 */
export function listedTool(served: ServedTool): Tool {
  const listed = mcpTool(served);
  const defaults = served.defaults;
  if (defaults === undefined || Object.keys(defaults).length === 0) return listed;
  const { required, properties, ...schema } = listed.inputSchema;
  const shown = Object.fromEntries(
    Object.entries(properties ?? {}).map(([key, property]) =>
      Object.hasOwn(defaults, key) && isObject(property)
        ? [key, { ...property, default: defaults[key] }]
        : [key, property],
    ),
  );
  const stillRequired = required?.filter((key) => !Object.hasOwn(defaults, key));
  return {
    ...listed,
    inputSchema: {
      ...schema,
      ...(properties === undefined ? {} : { properties: shown }),
      ...(stillRequired === undefined ? {} : { required: stillRequired }),
    },
  };
}

/** The arguments a call of `served` runs with: its defaults, under the caller's arguments (the caller's win, member by member). */
export function argumentsOf(served: ServedTool, given: Record<string, unknown>): Record<string, unknown> {
  return served.defaults === undefined ? given : { ...served.defaults, ...given };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
