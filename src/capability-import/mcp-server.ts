import type { Prompt, Resource, Tool } from '@modelcontextprotocol/sdk/types.js';
import { ApiError, ErrorCode } from '../http/errors';
import { KeptEntries } from './kept-entries';
import { causeOf, describeError } from '../ops/describe-error';
import { DestinationRefused } from '../agent-calls/outbound-guard';
import { validator } from '../http/validate';
import type { AgentCapabilities, CapabilityEntry, ToolDefinition } from '../registry/agent';
import { CAPABILITY_ENTRY_SCHEMA, TOOL_DEFINITION_SCHEMA } from '../registry/registration-schema';
import type { SchemaChecks } from '../user-schemas/schema-checks';
import type { ImportedCapabilities, ImportWarning } from '../registry/capability-importer';
import { serverAnswerOf } from '../agent-calls/mcp-answers';
import { McpSession, type McpSessionOptions, type McpTarget } from '../agent-calls/mcp-session';
import { withoutCredentials } from '../util/url-credentials';
import { toolsPage } from './mcp-tool-list';

/** Pages read of one list at most: a server that pages forever is not followed forever. */
const MAX_PAGES = 64;

/**
 * The bytes an import reads of a server's replies, all pages of all lists together, in replies of
 * MAX_BODY_BYTES each at most: the next page is not asked for once they are spent, so one import
 * reads at most this many replies' worth and one more reply.
 */
export const IMPORT_REPLIES = 4;

export const checkTool = validator<ToolDefinition>(TOOL_DEFINITION_SCHEMA, 'tool');
const checkEntry = validator<CapabilityEntry>(CAPABILITY_ENTRY_SCHEMA, 'capability entry');

/**
 * An MCP server's tools, resources and prompts as an agent's capabilities: `tools/list`,
 * `resources/list` and `prompts/list` (each followed through its pages, when the server has that
 * capability at all). Each entry passes the checks of a hand-written registration, its schemas
 * compiled by the same rules, or is left out and named in the warnings. Each page is checked as it
 * comes and dropped, and a list is read no further once its category is full or the import's
 * bytes are spent: work and memory follow what is kept, not what the server offers.
 */
export async function importCapabilities(
  target: McpTarget,
  options: McpSessionOptions,
  checks: SchemaChecks,
): Promise<ImportedCapabilities> {
  const bytesRead = { total: 0 };
  const session = await McpSession.open(target, { ...options, bytesRead });
  try {
    const { client } = session;
    const warnings: ImportWarning[] = [];
    const budget = new ReadBudget(bytesRead, IMPORT_REPLIES * options.maxReplyBytes, warnings);
    const offered = client.getServerCapabilities() ?? {};
    const requestOptions = session.requestOptions();
    const tools = new KeptEntries<ToolDefinition>('tools', warnings, checkTool, checks);
    const resources = new KeptEntries<CapabilityEntry>('resources', warnings, checkEntry, checks);
    const prompts = new KeptEntries<CapabilityEntry>('prompts', warnings, checkEntry, checks);
    if (offered.tools)
      await readPages(
        (cursor) => toolsPage(client, cursor, requestOptions, (name, problem) => tools.leaveOut(name, problem)),
        'tools',
        toolDefinition,
        tools,
        budget,
        warnings,
      );
    if (offered.resources)
      await readPages(
        (cursor) => client.listResources({ cursor }, requestOptions),
        'resources',
        resourceEntry,
        resources,
        budget,
        warnings,
      );
    if (offered.prompts)
      await readPages(
        (cursor) => client.listPrompts({ cursor }, requestOptions),
        'prompts',
        promptEntry,
        prompts,
        budget,
        warnings,
      );
    const capabilities: AgentCapabilities = {
      tools: tools.kept,
      ...optional('resources', resources.kept),
      ...optional('prompts', prompts.kept),
    };
    return { capabilities, warnings };
  } finally {
    await session.close();
  }
}

/** The bytes one import may still read; spent, it says so once in the warnings. */
class ReadBudget {
  private told = false;

  constructor(
    private readonly read: { total: number },
    private readonly maxBytes: number,
    private readonly warnings: ImportWarning[],
  ) {}

  /** Whether another page of `category` may be asked for. */
  allows(category: string): boolean {
    if (this.read.total < this.maxBytes) return true;
    if (!this.told) {
      this.told = true;
      this.warnings.push({
        capability: category,
        message: `the server's replies passed ${this.maxBytes} bytes (${IMPORT_REPLIES} times MAX_BODY_BYTES): no more pages are read`,
      });
    }
    return false;
  }
}

/**
 * The pages of one list, each checked into `kept` as it comes, up to MAX_PAGES, until the category
 * is full or the budget spent; a list cut at MAX_PAGES is named in the warnings.
 */
async function readPages<K extends 'tools' | 'resources' | 'prompts', T, E extends { name: string }>(
  list: (cursor: string | undefined) => Promise<{ nextCursor?: string } & Record<K, T[]>>,
  key: K,
  entryOf: (item: T) => E,
  kept: KeptEntries<E>,
  budget: ReadBudget,
  warnings: ImportWarning[],
): Promise<void> {
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    if (!budget.allows(key)) return;
    const answer = await list(cursor);
    cursor = answer.nextCursor;
    if (!(await kept.take(answer[key].map(entryOf), cursor !== undefined)) || cursor === undefined) return;
  }
  warnings.push({ capability: key, message: `more than ${MAX_PAGES} pages: the entries after them are left out` });
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
export function capabilityImporter(options: McpSessionOptions, checks: SchemaChecks): McpCapabilityImporter {
  return async (target) => {
    try {
      // The whole import within one call's timeout, as well as each request: the caller's request waits for it.
      return await importCapabilities(target, { ...options, signal: AbortSignal.timeout(options.timeoutMs) }, checks);
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
