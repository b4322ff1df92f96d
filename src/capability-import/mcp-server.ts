import type { Prompt, Resource, Tool } from '@modelcontextprotocol/sdk/types.js';
import { ApiError, ErrorCode } from '../http/errors';
import { causeOf, describeError } from '../ops/describe-error';
import { DestinationRefused } from '../agent-calls/outbound-guard';
import { validator } from '../http/validate';
import type { AgentCapabilities, CapabilityEntry, ToolDefinition } from '../registry/agent';
import { CAPABILITY_ENTRY_SCHEMA, REGISTRATION_LIMITS, TOOL_DEFINITION_SCHEMA } from '../registry/registration-schema';
import { rejectedSchemaOf } from '../registry/registration';
import type { UserSchemaCompiler } from '../registry/user-schemas';
import type { ImportedCapabilities, ImportWarning } from '../registry/capability-importer';
import { serverAnswerOf } from '../agent-calls/mcp-answers';
import { McpSession, type McpSessionOptions, type McpTarget } from '../agent-calls/mcp-session';
import { withoutCredentials } from '../util/url-credentials';
import { toolsPage } from './mcp-tool-list';

/** Pages read of one list at most: a server that pages forever is not followed forever. */
const MAX_PAGES = 64;

export const checkTool = validator<ToolDefinition>(TOOL_DEFINITION_SCHEMA, 'tool');
const checkEntry = validator<CapabilityEntry>(CAPABILITY_ENTRY_SCHEMA, 'capability entry');

/**
 * An MCP server's tools, resources and prompts as an agent's capabilities: `tools/list`,
 * `resources/list` and `prompts/list` (each followed through its pages, when the server has that
 * capability at all). Each entry passes the checks of a hand-written registration, its schemas
 * compiled by the same rules, or is left out and named in the warnings.
 */
export async function importCapabilities(
  target: McpTarget,
  options: McpSessionOptions,
  compiler: UserSchemaCompiler,
): Promise<ImportedCapabilities> {
  const session = await McpSession.open(target, options);
  try {
    const { client } = session;
    const warnings: ImportWarning[] = [];
    const offered = client.getServerCapabilities() ?? {};
    const requestOptions = session.requestOptions();
    const [tools, resources, prompts] = [
      offered.tools
        ? await allPages<'tools', Tool>(
            (cursor) => toolsPage(client, cursor, requestOptions, warnings),
            'tools',
            warnings,
          )
        : [],
      offered.resources
        ? await allPages<'resources', Resource>(
            (cursor) => client.listResources({ cursor }, requestOptions),
            'resources',
            warnings,
          )
        : [],
      offered.prompts
        ? await allPages<'prompts', Prompt>(
            (cursor) => client.listPrompts({ cursor }, requestOptions),
            'prompts',
            warnings,
          )
        : [],
    ];
    const capabilities: AgentCapabilities = {
      tools: accepted('tools', tools.map(toolDefinition), warnings, (tool) => checkTool(tool), compiler),
      ...optional('resources', accepted('resources', resources.map(resourceEntry), warnings, checkEntry, compiler)),
      ...optional('prompts', accepted('prompts', prompts.map(promptEntry), warnings, checkEntry, compiler)),
    };
    return { capabilities, warnings };
  } finally {
    await session.close();
  }
}

/** Every page of one list, up to MAX_PAGES; a list cut there is named in the warnings. */
async function allPages<K extends 'tools' | 'resources' | 'prompts', T>(
  list: (cursor: string | undefined) => Promise<{ nextCursor?: string } & Record<K, T[]>>,
  key: K,
  warnings: ImportWarning[],
): Promise<T[]> {
  const entries: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const answer = await list(cursor);
    entries.push(...answer[key]);
    cursor = answer.nextCursor;
    if (cursor === undefined) return entries;
  }
  warnings.push({ capability: key, message: `more than ${MAX_PAGES} pages: the entries after them are left out` });
  return entries;
}

/**
 * The entries that pass a registration's checks, the first of each name, at most as many as a
 * registration holds; the others are named in the warnings. An A2A agent's skills pass here too.
 */
export function accepted<T extends { name: string }>(
  category: string,
  entries: T[],
  warnings: ImportWarning[],
  check: (entry: T) => unknown,
  compiler: UserSchemaCompiler,
): T[] {
  const kept: T[] = [];
  const names = new Set<string>();
  for (const entry of entries) {
    const capability = `${category}/${entry.name}`;
    const problem = problemOf(entry, check, compiler, names);
    if (problem !== undefined) {
      warnings.push({ capability, message: problem });
    } else if (kept.length >= REGISTRATION_LIMITS.capabilityEntries) {
      warnings.push({ capability, message: `more than ${REGISTRATION_LIMITS.capabilityEntries} ${category}` });
    } else {
      kept.push(entry);
      names.add(entry.name);
    }
  }
  return kept;
}

function problemOf<T extends { name: string }>(
  entry: T,
  check: (entry: T) => unknown,
  compiler: UserSchemaCompiler,
  names: Set<string>,
): string | undefined {
  try {
    check(entry);
  } catch (error) {
    if (error instanceof ApiError) return error.message;
    throw error;
  }
  if (names.has(entry.name)) return 'a second entry of the same name';
  const rejected = rejectedSchemaOf(entry as Parameters<typeof rejectedSchemaOf>[0], compiler);
  return rejected && `invalid ${rejected.member}: ${rejected.error.message}`;
}

const optional = <K extends string, T>(key: K, entries: T[]) =>
  (entries.length === 0 ? {} : { [key]: entries }) as Partial<Record<K, T[]>>;

/** What a registration keeps of an MCP tool: its contract fields, and `title`, `annotations` and `execution` as sent. */
function toolDefinition(tool: Tool): ToolDefinition {
  return {
    name: tool.name,
    description: tool.description ?? tool.title ?? '',
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
    ...(tool.execution === undefined ? {} : { execution: tool.execution }),
  };
}

function resourceEntry(resource: Resource): CapabilityEntry {
  return {
    name: resource.name,
    ...(resource.description === undefined ? {} : { description: resource.description }),
    uri: resource.uri,
  };
}

/** A prompt's arguments (strings, by MCP) as an inputSchema, so a task checks them as it checks a tool's params. */
function promptEntry(prompt: Prompt): CapabilityEntry {
  const args = prompt.arguments ?? [];
  return {
    name: prompt.name,
    ...(prompt.description === undefined ? {} : { description: prompt.description }),
    inputSchema: {
      type: 'object',
      properties: Object.fromEntries(
        args.map((arg) => [arg.name, { type: 'string', ...(arg.description ? { description: arg.description } : {}) }]),
      ),
      required: args.filter((arg) => arg.required).map((arg) => arg.name),
      additionalProperties: false,
    },
  };
}

/** Reads an MCP agent's capabilities for the registry; whatever keeps it from them is the caller's 422. */
export type McpCapabilityImporter = (target: McpTarget) => Promise<ImportedCapabilities>;

/** importCapabilities for the API: its failures as 422 CAPABILITY_IMPORT_FAILED, saying what the server did. */
export function capabilityImporter(options: McpSessionOptions, compiler: UserSchemaCompiler): McpCapabilityImporter {
  return async (target) => {
    try {
      // The whole import within one call's timeout, as well as each request: the caller's request waits for it.
      return await importCapabilities(target, { ...options, signal: AbortSignal.timeout(options.timeoutMs) }, compiler);
    } catch (error) {
      throw new ApiError(
        ErrorCode.CAPABILITY_IMPORT_FAILED,
        withoutCredentials(
          `Reading the capabilities of the MCP server at ${target.endpointUrl} failed: ${whyImportFailed(error)}`,
        ),
      );
    }
  };
}

function whyImportFailed(error: unknown): string {
  const answer = serverAnswerOf(error);
  if (answer !== undefined) return `it answered ${answer}`;
  return causeOf(error, DestinationRefused)?.message ?? describeError(error);
}
