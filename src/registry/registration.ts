import { participantKey, type ParticipantRef } from '../auth/participant';
import { ApiError, ErrorCode, invalid } from '../http/errors';
import { requireCallableUrl } from '../agent-calls/outbound-guard';
import { leadsToOwnService, type OwnAddress } from '../agent-calls/own-endpoint';
import { AgentProtocol, CAPABILITY_CATEGORIES, type Agent, type AgentCapabilities, type JsonSchema } from './agent';
import type { AgentRegistrationFields, AgentUpdateFields } from './registration-schema';
import { SchemaRejected } from '../user-schemas/compiler';
import type { SchemaChecks } from '../user-schemas/schema-checks';

/** The fields of an agent that a registration sets (and PATCH may change). */
const REGISTRATION_FIELDS = [
  'name',
  'description',
  'defaultPrompt',
  'imageUrl',
  'backgroundImageUrl',
  'websiteUrl',
  'mcpUrl',
  'chatUrl',
  'callbackUrl',
  'protocol',
  'headers',
  'capabilities',
  'visibility',
  'sharedWith',
] as const satisfies ReadonlyArray<keyof Agent | 'mcpUrl'>;

/** The fields of an agent that a registration sets, with the aliases resolved, named as the API names them. */
export type AgentRegistration = Pick<Agent, Exclude<(typeof REGISTRATION_FIELDS)[number], 'mcpUrl'>> & {
  mcpUrl: string;
};

export interface RegistrationRules {
  allowInsecureAgentUrls: boolean;
  schemas: SchemaChecks;
  /** Where this service listens: an agent's endpoint may not lead back to it. */
  ownAddress: OwnAddress;
}

const ALIASES = [
  ['mcpUrl', 'mcpEndpoint'],
  ['chatUrl', 'chatEndpoint'],
] as const;

/** Registration fields with `mcpEndpoint`/`chatEndpoint` folded into `mcpUrl`/`chatUrl`; 400 when both are given and differ. */
export function resolveAliases<T extends AgentUpdateFields<ParticipantRef>>(
  fields: T,
): Omit<T, 'mcpEndpoint' | 'chatEndpoint'> {
  const resolved: AgentUpdateFields<ParticipantRef> = { ...fields };
  for (const [name, alias] of ALIASES) {
    const [value, aliased] = [fields[name], fields[alias]];
    if (value !== undefined && aliased !== undefined && value !== aliased) {
      throw invalid(`${name} and ${alias} name the same endpoint and differ`, [
        { path: `/${alias}`, message: `differs from ${name}` },
      ]);
    }
    delete resolved[alias];
    if (aliased !== undefined) resolved[name] = aliased;
  }
  return resolved as Omit<T, 'mcpEndpoint' | 'chatEndpoint'>;
}

/** The part of a stored agent that its owner registered (and may change with PATCH). */
export const registrationOf = ({ endpointUrl, ...agent }: Agent): AgentRegistration =>
  pickRegistration({ ...agent, mcpUrl: endpointUrl });

/** The agent's fields that a registration sets: the API's `mcpUrl` is the agent's endpoint, whatever its protocol. */
export const agentFieldsOf = ({ mcpUrl, ...registration }: AgentRegistration) => ({
  ...registration,
  endpointUrl: mcpUrl,
});

/** Only the registration's fields, without unset ones (`headers: {}` unsets them): unknown members of a request are dropped here. */
function pickRegistration(source: AgentRegistration): AgentRegistration {
  const picked = Object.fromEntries(REGISTRATION_FIELDS.map((field) => [field, source[field]])) as AgentRegistration;
  if (picked.headers !== undefined && Object.keys(picked.headers).length === 0) picked.headers = undefined;
  return withoutUndefined(picked);
}

/** A checked registration from a body that passed AGENT_REGISTRATION_SCHEMA, its `sharedWith` typed. */
export async function registrationFrom(
  fields: AgentRegistrationFields<ParticipantRef>,
  rules: RegistrationRules,
  origin?: string,
): Promise<AgentRegistration> {
  const resolved = resolveAliases(fields);
  for (const name of ['mcpUrl', 'chatUrl', 'capabilities'] as const) {
    if (resolved[name] === undefined)
      throw invalid(`${name} is required`, [{ path: '/', message: `must have required property '${name}'` }]);
  }
  const registration: AgentRegistration = {
    ...pickRegistration(resolved as AgentRegistration),
    protocol: resolved.protocol ?? AgentProtocol.ACS,
    visibility: resolved.visibility ?? 'public',
    sharedWith: withoutRepeats(resolved.sharedWith ?? []),
  };
  await checkRegistration(registration, rules, origin);
  return registration;
}

/** The registration `current` becomes with `update` (a body that passed AGENT_UPDATE_SCHEMA, its `sharedWith` typed) applied, checked again. */
export async function updatedRegistration(
  current: AgentRegistration,
  update: AgentUpdateFields<ParticipantRef>,
  rules: RegistrationRules,
  origin?: string,
): Promise<AgentRegistration> {
  const resolved = resolveAliases(update);
  const merged: AgentRegistration = { ...current, ...pickRegistration(resolved as AgentRegistration) };
  if (resolved.sharedWith) merged.sharedWith = withoutRepeats(resolved.sharedWith);
  // `headers` replaces the stored ones whole; `{}` removes them.
  if (resolved.headers !== undefined && Object.keys(resolved.headers).length === 0) delete merged.headers;
  await checkRegistration(merged, rules, origin);
  return merged;
}

/**
 * What the schema cannot say: the rules of the URLs the service calls, an endpoint that is not the
 * service itself, the headers, unique capability names, and every agent-supplied schema compiling.
 * `origin` is the service's URL as the request reached it.
 */
async function checkRegistration(
  registration: AgentRegistration,
  rules: RegistrationRules,
  origin?: string,
): Promise<void> {
  // The URLs the service itself calls; the others are only shown to users.
  for (const name of ['mcpUrl', 'callbackUrl'] as const)
    requireCallableUrl(registration[name], name, rules.allowInsecureAgentUrls);
  requireEndpointElsewhere(registration.mcpUrl, rules, origin);
  checkHeaders(registration);
  checkUniqueNames(registration.capabilities);
  await compileSchemas(registration.capabilities, rules.schemas);
}

/**
 * 400 for an endpoint that leads back to this service's own A2A or MCP endpoints (leadsToOwnService):
 * every task of such an agent would start another task of the service, without end.
 */
export function requireEndpointElsewhere(url: string, rules: RegistrationRules, origin?: string): void {
  if (!leadsToOwnService(url, rules.ownAddress, origin)) return;
  throw invalid(
    'mcpUrl leads back to this service (its own /a2a/ or MCP endpoint, or its own address and port): every task of the agent would start another. Register the agent behind it instead',
    [{ path: '/mcpUrl', message: 'must not be this service itself' }],
  );
}

/**
 * Headers the MCP or A2A client sets itself, or that frame the request: an owner's value for one of
 * them would break the call or smuggle another request into it.
 */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'a2a-version',
]);

/** The protocols whose requests carry the owner's `headers`: the service's own signed POST carries none. */
const sendsHeaders = (protocol: AgentProtocol): boolean => protocol !== AgentProtocol.ACS;

function checkHeaders({ headers, protocol }: AgentRegistration): void {
  const names = Object.keys(headers ?? {});
  if (names.length === 0) return;
  if (!sendsHeaders(protocol)) {
    throw invalid(
      'headers are sent to MCP and A2A agents only: give protocol "mcp" or "a2a", or headers {} to remove them',
      [{ path: '/headers', message: 'only with protocol "mcp" or "a2a"' }],
    );
  }
  const seen = new Set<string>();
  for (const name of names) {
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower) || lower.startsWith('proxy-'))
      throw invalid(`Header ${name} is set by the service itself`, [{ path: `/headers/${name}`, message: 'reserved' }]);
    if (seen.has(lower))
      throw invalid(`Header ${name} is given twice`, [{ path: `/headers/${name}`, message: 'duplicate name' }]);
    seen.add(lower);
  }
}

function checkUniqueNames(capabilities: AgentCapabilities): void {
  for (const category of CAPABILITY_CATEGORIES) {
    const seen = new Set<string>();
    for (const entry of capabilities[category] ?? []) {
      if (seen.has(entry.name)) {
        throw new ApiError(
          ErrorCode.CONFLICT,
          `Duplicate ${category} name "${entry.name}": names must be unique within an agent`,
          [{ path: `/capabilities/${category}`, message: `duplicate name "${entry.name}"` }],
        );
      }
      seen.add(entry.name);
    }
  }
}

/** Compiles every schema on the check threads, one after the other: the first that fails is the 400. */
async function compileSchemas(capabilities: AgentCapabilities, checks: SchemaChecks): Promise<void> {
  for (const category of CAPABILITY_CATEGORIES) {
    for (const [index, entry] of (capabilities[category] ?? []).entries()) {
      const rejected = await rejectedSchemaOf(entry, checks);
      if (!rejected) continue;
      const { member, error } = rejected;
      const path = `/capabilities/${category}/${index}/${member}${error.pointer ?? ''}`;
      throw invalid(`Invalid ${member} of ${category} "${entry.name}": ${error.message}`, [
        { path, message: error.message },
      ]);
    }
  }
}

/** The first of an entry's schemas (inputSchema, outputSchema, annotations/outputSchema) that does not compile, with why. */
export async function rejectedSchemaOf(
  entry: { inputSchema?: JsonSchema; outputSchema?: JsonSchema; annotations?: { outputSchema?: JsonSchema } },
  checks: SchemaChecks,
): Promise<{ member: string; error: SchemaRejected } | undefined> {
  const schemas: Array<[string, JsonSchema | undefined]> = [
    ['inputSchema', entry.inputSchema],
    ['outputSchema', entry.outputSchema],
    ['annotations/outputSchema', entry.annotations?.outputSchema],
  ];
  for (const [member, schema] of schemas) {
    if (schema === undefined) continue;
    try {
      await checks.compile(schema);
    } catch (error) {
      if (!(error instanceof SchemaRejected)) throw error;
      return { member, error };
    }
  }
  return undefined;
}

function withoutRepeats(entries: ParticipantRef[]): ParticipantRef[] {
  const byKey = new Map(entries.map((entry) => [participantKey(entry), { type: entry.type, id: entry.id }]));
  return [...byKey.values()];
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as T;
}
