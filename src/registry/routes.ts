import { randomUUID } from 'node:crypto';
import type { RouterContext } from '@koa/router';
import type { ApiKeyStore } from '../auth/api-keys';
import { isAdmin, PrincipalKind, requireKind, requirePrincipal, type Principal } from '../auth/principal';
import { newSigningSecret } from '../auth/signing-secret';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { ApiError, ErrorCode, forbidden, invalid } from '../http/errors';
import { serviceOriginOf } from '../http/service-origin';
import { validator } from '../http/validate';
import { requireCallableUrl } from '../agent-calls/outbound-guard';
import { canonicalJson } from '../util/canonical-json';
import { canManageAgent, isTheAgent, type Agent } from './agent';
import type { AgentDirectory } from './agent-directory';
import type { AgentStore } from './agent-store';
import { agentView } from './agent-view';
import { importsCapabilities, type CapabilityImporter } from './capability-importer';
import { documentedRegistrationSchema, documentedUpdateSchema } from './documented-schemas';
import {
  AGENT_LIST_QUERY_SCHEMA,
  AGENT_REGISTRATION_SCHEMA,
  AGENT_SEARCH_QUERY_SCHEMA,
  AGENT_UPDATE_SCHEMA,
  type AgentListQuery,
  type AgentRegistrationFields,
  type AgentSearchQuery,
  type AgentUpdateFields,
} from './registration-schema';
import {
  agentFieldsOf,
  registrationFrom,
  registrationOf,
  requireEndpointElsewhere,
  updatedRegistration,
  type RegistrationRules,
} from './registration';
import { searchAgents } from './agent-search';
import { typedSharing } from './sharing';

export interface RegistryDeps {
  agents: AgentStore;
  /** Lists and searches: served from memory, so that they do not read the whole collection. */
  directory: AgentDirectory;
  apiKeys: ApiKeyStore;
  rules: RegistrationRules;
  /** Reads an MCP agent's tools, resources and prompts from its server, an A2A agent's skills from its card. */
  importCapabilities: CapabilityImporter;
  /** Counts a non-admin's refresh of an agent's capabilities, by agent id; 429 RATE_LIMITED when too soon. */
  refreshLimit: { consume(agentId: string): Promise<void> };
}

const checkRegistration = validator<AgentRegistrationFields>(AGENT_REGISTRATION_SCHEMA, 'agent registration');
const checkUpdate = validator<AgentUpdateFields>(AGENT_UPDATE_SCHEMA, 'agent update');
const checkListQuery = validator<AgentListQuery>(AGENT_LIST_QUERY_SCHEMA, 'query string');
const checkSearchQuery = validator<AgentSearchQuery>(AGENT_SEARCH_QUERY_SCHEMA, 'query string');

/** The error answered when an MCP or A2A agent's capabilities cannot be read. */
const CAPABILITY_IMPORT_ERROR = {
  '422':
    "CAPABILITY_IMPORT_FAILED: the MCP server's capabilities, or the A2A agent's card, could not be read; the message says what it did",
};

export const REGISTRY_ROUTES = routeTable({
  versioned: true,
  operations: {
    'POST /agents': {
      summary:
        'Register an agent; apiKey and signingSecret are shown only here. An MCP agent without capabilities gets those its server lists',
      credential: 'any',
      body: documentedRegistrationSchema(),
      success: [
        201,
        'The agent record with apiKey and signingSecret, and warnings [{capability, message}] naming the entries of an MCP server left out when its capabilities were read',
      ],
      errors: CAPABILITY_IMPORT_ERROR,
    },
    'GET /agents': {
      summary: 'Agents visible to the caller, paged by limit and after',
      credential: 'any',
      query: AGENT_LIST_QUERY_SCHEMA,
      success: [200, 'Array of agent records'],
    },
    'GET /agents/search': {
      summary: 'Ranked search over names, descriptions and tools',
      credential: 'any',
      query: AGENT_SEARCH_QUERY_SCHEMA,
      success: [200, 'Array of agent records, best match first'],
    },
    'GET /agents/:agentId': {
      summary: 'One agent',
      credential: 'any',
      success: [
        200,
        'The agent record, with its protocol; its owner and admins also see owner, sharedWith, callbackUrl and headerNames',
      ],
    },
    'PATCH /agents/:agentId': {
      summary: 'Change an agent (owner or admin); checked like a registration',
      credential: 'any',
      body: documentedUpdateSchema(),
      success: [200, 'The agent record'],
    },
    'POST /agents/:agentId/capabilities/refresh': {
      summary:
        "Read an MCP agent's capabilities from its server, or an A2A agent's from its card, again and store them (owner or admin); 409 for an acs agent",
      credential: 'any',
      success: [
        200,
        'The agent record with warnings [{capability, message}]; its version increases only when the capabilities changed',
      ],
      errors: CAPABILITY_IMPORT_ERROR,
    },
    'DELETE /agents/:agentId': {
      summary: 'Delete an agent and revoke its keys (owner or admin)',
      credential: 'any',
      success: [204, 'Deleted'],
    },
    'POST /agents/:agentId/keys/rotate': {
      summary: 'Issue a new agent key and signing secret; the old key stops working',
      credential: 'any',
      success: [200, 'The new apiKey and signingSecret'],
    },
  },
});

const DEFAULT_PAGE_SIZE = 50;

const pageOf = (query: AgentListQuery) => ({
  limit: query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit),
  after: query.after,
});

const changedMeanwhile = (agentId: string) =>
  new ApiError(ErrorCode.CONFLICT, `Agent ${agentId} was changed or deleted meanwhile; read it again and retry`);
const agentNotFound = (agentId: string) => new ApiError(ErrorCode.AGENT_NOT_FOUND, `Agent ${agentId} not found`);

/** The agent if `principal` (none: an anonymous caller) may see it, else 404: an invisible agent is not admitted to exist. */
export async function visibleAgentOr404(
  agents: Pick<AgentStore, 'findVisible'>,
  principal: Principal | undefined,
  agentId: string,
): Promise<Agent> {
  const agent = await agents.findVisible(principal, agentId);
  if (!agent) throw agentNotFound(agentId);
  return agent;
}

/** /agents: registration, lookup, change and removal of agents. Served bare and under /v1. */
export function createRegistryRoutes(deps: RegistryDeps): RouteModule {
  const { agents, directory, apiKeys, rules, importCapabilities, refreshLimit } = deps;
  const router = new DocumentedRouter(REGISTRY_ROUTES);

  /** What an import changes of an agent: its capabilities, and the endpoint an A2A agent's card names, checked as a registered one is. */
  function importedInto(
    { capabilities, endpointUrl, pushNotifications }: Awaited<ReturnType<CapabilityImporter>>,
    current: string,
    origin: string,
  ): Pick<Agent, 'capabilities' | 'endpointUrl' | 'pushNotifications'> {
    const pushes = pushNotifications ? { pushNotifications } : {};
    if (endpointUrl === undefined) return { capabilities, endpointUrl: current, ...pushes };
    requireCallableUrl(endpointUrl, 'mcpUrl', rules.allowInsecureAgentUrls);
    requireEndpointElsewhere(endpointUrl, rules, origin);
    return { capabilities, endpointUrl, ...pushes };
  }

  /** The caller, and the agent of the route if the caller may see it (else 404). */
  async function visibleAgent(ctx: RouterContext): Promise<{ principal: Principal; agent: Agent }> {
    const principal = requirePrincipal(ctx);
    return { principal, agent: await visibleAgentOr404(agents, principal, ctx.params.agentId) };
  }

  router.serve('POST /agents', async (ctx) => {
    const principal = requireKind(ctx, PrincipalKind.ADMIN, PrincipalKind.SERVICE, PrincipalKind.HUMAN);
    const body = checkRegistration(ctx.request.body);
    // An MCP or A2A agent registered without capabilities gets its own, read once the rest is checked.
    const imports = importsCapabilities(body.protocol) && body.capabilities === undefined;
    const registration = await registrationFrom(
      {
        ...body,
        sharedWith: await typedSharing(body.sharedWith, agents),
        ...(imports ? { capabilities: { tools: [] } } : {}),
      },
      rules,
      serviceOriginOf(ctx),
    );
    let fields = agentFieldsOf(registration);
    const imported = imports ? await importCapabilities(fields) : undefined;
    if (imported) fields = { ...fields, ...importedInto(imported, fields.endpointUrl, serviceOriginOf(ctx)) };
    const now = new Date();
    const agent: Agent = {
      id: randomUUID(),
      ...fields,
      ...(principal.kind === PrincipalKind.ADMIN ? {} : { owner: { kind: principal.kind, id: principal.id } }),
      signingSecret: newSigningSecret(),
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    await agents.insert(agent);
    const { key } = await apiKeys.issue(PrincipalKind.AGENT, agent.id);
    ctx.status = 201;
    ctx.set('Location', `/agents/${agent.id}`);
    ctx.body = {
      ...agentView(agent, principal),
      apiKey: key,
      signingSecret: agent.signingSecret,
      ...(imported ? { warnings: imported.warnings } : {}),
    };
  });

  router.serve('GET /agents', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const found = await directory.listVisible(principal, pageOf(checkListQuery(ctx.query)));
    ctx.body = found.map((agent) => agentView(agent, principal));
  });

  // Before /agents/:agentId, which would take "search" for an id.
  router.serve('GET /agents/search', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const query = checkSearchQuery(ctx.query);
    if (!query.query?.trim() && query.capability === undefined) {
      throw invalid('Give a search query, a capability (for instance capability=tools/translate), or both');
    }
    const found = await searchAgents(directory, principal, { ...query, ...pageOf(query) });
    ctx.body = found.map((agent) => agentView(agent, principal));
  });

  router.serve('GET /agents/:agentId', async (ctx) => {
    const { principal, agent } = await visibleAgent(ctx);
    ctx.body = agentView(agent, principal);
  });

  router.serve('PATCH /agents/:agentId', async (ctx) => {
    const { principal, agent } = await visibleAgent(ctx);
    if (!canManageAgent(principal, agent)) throw forbidden('Only the owner of an agent or an admin may change it');
    const update = checkUpdate(ctx.request.body);
    const registration = await updatedRegistration(
      registrationOf(agent),
      { ...update, sharedWith: await typedSharing(update.sharedWith, agents) },
      rules,
      serviceOriginOf(ctx),
    );
    // The registration replaces the stored one whole: headers it no longer has are gone.
    const { headers: _replaced, ...unregistered } = agent;
    const updated: Agent = {
      ...unregistered,
      ...agentFieldsOf(registration),
      version: agent.version + 1,
      updatedAt: new Date(),
    };
    if (!(await agents.replace(updated, agent.version))) {
      throw changedMeanwhile(agent.id);
    }
    ctx.body = agentView(updated, principal);
  });

  router.serve('POST /agents/:agentId/capabilities/refresh', async (ctx) => {
    const { principal, agent } = await visibleAgent(ctx);
    if (!canManageAgent(principal, agent))
      throw forbidden('Only the owner of an agent or an admin may refresh its capabilities');
    if (!importsCapabilities(agent.protocol)) {
      throw new ApiError(
        ErrorCode.CONFLICT,
        `Agent ${agent.id} speaks ${agent.protocol}: only an MCP or A2A agent's capabilities are read from the agent`,
      );
    }
    if (!isAdmin(principal)) await refreshLimit.consume(agent.id);
    const imported = await importCapabilities(agent);
    const { warnings } = imported;
    const read = importedInto(imported, agent.endpointUrl, serviceOriginOf(ctx));
    const { pushNotifications: _pushedBefore, ...unread } = agent;
    const before = {
      endpointUrl: agent.endpointUrl,
      capabilities: agent.capabilities,
      ...(agent.pushNotifications ? { pushNotifications: true } : {}),
    };
    if (canonicalJson(read) === canonicalJson(before)) {
      ctx.body = { ...agentView(agent, principal), warnings };
      return;
    }
    const updated: Agent = { ...unread, ...read, version: agent.version + 1, updatedAt: new Date() };
    if (!(await agents.replace(updated, agent.version))) {
      throw changedMeanwhile(agent.id);
    }
    ctx.body = { ...agentView(updated, principal), warnings };
  });

  router.serve('DELETE /agents/:agentId', async (ctx) => {
    const { principal, agent } = await visibleAgent(ctx);
    if (!canManageAgent(principal, agent)) throw forbidden('Only the owner of an agent or an admin may delete it');
    // Keys first: a key must never outlive its agent, even if the delete below fails.
    await apiKeys.revokeAllOf(agent.id);
    await agents.delete(agent.id);
    ctx.status = 204;
  });

  router.serve('POST /agents/:agentId/keys/rotate', async (ctx) => {
    const { principal, agent } = await visibleAgent(ctx);
    if (!isTheAgent(principal, agent) && !canManageAgent(principal, agent))
      throw forbidden("Only the agent, its owner or an admin may rotate the agent's credentials");
    // The secret first: if changes keep the agent busy, nothing is rotated yet.
    const signingSecret = newSigningSecret();
    if (!(await agents.setSigningSecret(agent.id, signingSecret))) {
      throw new ApiError(ErrorCode.CONFLICT, `Agent ${agent.id} was being changed or was deleted; rotate again`);
    }
    await apiKeys.revokeAllOf(agent.id);
    const { key } = await apiKeys.issue(PrincipalKind.AGENT, agent.id);
    ctx.body = { agentId: agent.id, apiKey: key, signingSecret };
  });

  return router.module();
}
