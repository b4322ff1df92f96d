import { ApiError, ErrorCode } from '../http/errors';
import { checkTool } from './mcp-server';
import { KeptEntries } from './kept-entries';
import { type ImportedCapabilities } from '../registry/capability-importer';
import { causeOf, describeError } from '../ops/describe-error';
import type { ToolDefinition } from '../registry/agent';
import { REGISTRATION_LIMITS } from '../registry/registration-schema';
import type { SchemaChecks } from '../user-schemas/schema-checks';
import { DestinationRefused } from '../agent-calls/outbound-guard';
import { readAgentCard, type A2aRequestOptions, type A2aTarget } from '../agent-calls/a2a-client';
import { A2A_PROTOCOL_VERSION, TOOL_SCHEMAS_EXTENSION } from '../agent-calls/a2a-protocol';
import { hasCredentials, withoutCredentials } from '../util/url-credentials';

/** Where A2A puts a card: the path an A2A agent's registered URL may end with instead of its endpoint's. */
const CARD_PATH = '/.well-known/agent-card.json';

/** What a card says of one skill; the rest of its members are not read. */
interface CardSkill {
  id?: unknown;
  name?: unknown;
  description?: unknown;
}

/** An A2A agent's card as capabilities, and the JSON-RPC endpoint the card names. */
export interface ImportedCard extends ImportedCapabilities {
  /** The endpoint calls go to: the card's, when the registered URL named the card; else that URL itself. */
  endpointUrl: string;
  /** The card's `capabilities.pushNotifications` is true. */
  pushNotifications?: true;
}

/**
 * Reads an A2A agent's Agent Card through the outbound guard: from the registered URL when it names a card,
 * else from the well-known path at the endpoint's origin. Each skill becomes a tool named by its
 * id, with the schema the tool-schemas extension gives it (a card of this service has one), else
 * any object; a skill that fails a registration's checks is left out and named in the warnings.
 */
export async function importAgentCard(
  target: A2aTarget,
  options: A2aRequestOptions,
  checks: SchemaChecks,
): Promise<ImportedCard> {
  const namesCard = new URL(target.endpointUrl).pathname.endsWith(CARD_PATH);
  const card = await readAgentCard(
    namesCard ? target.endpointUrl : new URL(CARD_PATH, target.endpointUrl).href,
    target.headers,
    options,
  );
  const endpointUrl = namesCard ? endpointOf(card) : target.endpointUrl;
  const schemas = inputSchemasOf(card);
  const skills = Array.isArray(card.skills) ? (card.skills as CardSkill[]) : [];
  const warnings: ImportedCapabilities['warnings'] = [];
  const tools = new KeptEntries<ToolDefinition>('tools', warnings, checkTool, checks);
  // Skills are made tools only as long as the category has room: a card of thousands costs what one of 256 does.
  for (const [index, skill] of skills.entries()) {
    if (!(await tools.take([toolOf(skill, schemas)], index < skills.length - 1))) break;
  }
  const pushes = (card.capabilities as { pushNotifications?: unknown } | undefined)?.pushNotifications === true;
  return { endpointUrl, capabilities: { tools: tools.kept }, warnings, ...(pushes ? { pushNotifications: true } : {}) };
}

/** The card's JSON-RPC interface of A2A 1.x: the only binding and version the service calls. */
function endpointOf(card: Record<string, unknown>): string {
  const interfaces = Array.isArray(card.supportedInterfaces) ? (card.supportedInterfaces as unknown[]) : [];
  const major = A2A_PROTOCOL_VERSION.split('.')[0];
  for (const entry of interfaces) {
    const { url, protocolBinding, protocolVersion } = (entry ?? {}) as Record<string, unknown>;
    if (
      typeof url === 'string' &&
      protocolBinding === 'JSONRPC' &&
      typeof protocolVersion === 'string' &&
      protocolVersion.split('.')[0] === major
    )
      return usableEndpoint(url);
  }
  throw new Error(`the card names no JSONRPC interface of A2A ${A2A_PROTOCOL_VERSION} in supportedInterfaces`);
}

/**
 * The card's endpoint, held to what a registered `mcpUrl` is: http or https, at most as long, no
 * credentials in it (fetch refuses such URLs). The https rule is the registry's, applied after.
 */
function usableEndpoint(url: string): string {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (
    !parsed ||
    !['http:', 'https:'].includes(parsed.protocol) ||
    url.length > REGISTRATION_LIMITS.urlChars ||
    hasCredentials(url)
  )
    throw new Error(
      `the card's JSONRPC endpoint is not an http(s) URL of at most ${REGISTRATION_LIMITS.urlChars} characters without credentials`,
    );
  return url;
}

function inputSchemasOf(card: Record<string, unknown>): Record<string, unknown> {
  const extensions = (card.capabilities as { extensions?: unknown } | undefined)?.extensions;
  const ours = Array.isArray(extensions)
    ? (extensions as Array<{ uri?: unknown; params?: { inputSchemas?: unknown } }>).find(
        (extension) => extension?.uri === TOOL_SCHEMAS_EXTENSION,
      )
    : undefined;
  const schemas = ours?.params?.inputSchemas;
  return typeof schemas === 'object' && schemas !== null ? (schemas as Record<string, unknown>) : {};
}

/** A skill as a tool; a malformed one is still returned, for the checks to name what is wrong. */
function toolOf(skill: CardSkill, schemas: Record<string, unknown>): ToolDefinition {
  const name = typeof skill.id === 'string' ? skill.id : String(skill.id);
  // Own members only: a skill id such as `constructor` must not find Object's.
  const given = Object.hasOwn(schemas, name) ? schemas[name] : undefined;
  return {
    name,
    description: typeof skill.description === 'string' ? skill.description : '',
    inputSchema: (given as ToolDefinition['inputSchema'] | undefined) ?? { type: 'object' },
    ...(typeof skill.name === 'string' && skill.name !== name ? { title: skill.name } : {}),
  };
}

/** Reads an A2A agent's card for the registry; whatever keeps it from the card is the caller's 422. */
export function agentCardImporter(options: A2aRequestOptions, checks: SchemaChecks) {
  return async (target: A2aTarget): Promise<ImportedCard> => {
    try {
      return await importAgentCard(target, { ...options, signal: AbortSignal.timeout(options.timeoutMs) }, checks);
    } catch (error) {
      throw new ApiError(
        ErrorCode.CAPABILITY_IMPORT_FAILED,
        withoutCredentials(
          `Reading the Agent Card of the A2A agent at ${target.endpointUrl} failed: ${
            causeOf(error, DestinationRefused)?.message ?? describeError(error)
          }`,
        ),
      );
    }
  };
}
