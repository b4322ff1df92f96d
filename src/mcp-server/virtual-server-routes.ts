import { randomUUID } from 'node:crypto';
import type { RouterContext } from '@koa/router';
import { PrincipalKind, principalRef, requireKind, requirePrincipal, type Principal } from '../auth/principal';
import { ApiError, ErrorCode, forbidden, invalid } from '../http/errors';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { summariseProblems, validator } from '../http/validate';
import { canManageAgent } from '../registry/agent';
import type { AgentDirectory } from '../registry/agent-directory';
import type { AgentStore } from '../registry/agent-store';
import { AGENT_LIST_QUERY_SCHEMA, type AgentListQuery } from '../registry/registration-schema';
import { typedSharing } from '../registry/sharing';
import { resolveEntries } from './virtual-catalog';
import {
  VIRTUAL_SERVER_CREATE_SCHEMA,
  VIRTUAL_SERVER_UPDATE_SCHEMA,
  type VirtualServerFields,
  type VirtualServerUpdate,
  type VirtualToolEntry,
} from './virtual-server-schema';
import type { VirtualServer, VirtualServers } from './virtual-servers';

export const VIRTUAL_SERVER_ROUTES = routeTable({
  versioned: true,
  operations: {
    'POST /mcp-servers': {
      summary:
        'Define an MCP virtual server: some tools of some agents the caller may see, served at /mcp/{serverId} (docs/mcp-server.md)',
      credential: 'any',
      body: VIRTUAL_SERVER_CREATE_SCHEMA,
      success: [201, 'The virtual server, with its serverId and url'],
    },
    'GET /mcp-servers': {
      summary: 'Virtual servers visible to the caller, by serverId, paged by limit and after',
      credential: 'any',
      query: AGENT_LIST_QUERY_SCHEMA,
      success: [200, 'Array of virtual servers'],
    },
    'GET /mcp-servers/:serverId': {
      summary: 'One virtual server',
      credential: 'any',
      success: [200, 'The virtual server; its owner and admins also see owner and sharedWith'],
    },
    'PATCH /mcp-servers/:serverId': {
      summary: 'Change a virtual server (owner or admin); the fields given replace the stored ones, tools whole',
      credential: 'any',
      body: VIRTUAL_SERVER_UPDATE_SCHEMA,
      success: [200, 'The virtual server'],
    },
    'DELETE /mcp-servers/:serverId': {
      summary: 'Delete a virtual server (owner or admin); its sessions end with it',
      credential: 'any',
      success: [204, 'Deleted'],
    },
  },
});

export interface VirtualServerDeps {
  servers: VirtualServers;
  /** Types bare ids of `sharedWith`, as agents' are. */
  agents: AgentStore;
  directory: Pick<AgentDirectory, 'findVisibleByIds'>;
}

const checkCreate = validator<VirtualServerFields>(VIRTUAL_SERVER_CREATE_SCHEMA, 'MCP virtual server');
const checkUpdate = validator<VirtualServerUpdate>(VIRTUAL_SERVER_UPDATE_SCHEMA, 'MCP virtual server update');
const checkListQuery = validator<AgentListQuery>(AGENT_LIST_QUERY_SCHEMA, 'query string');

const DEFAULT_PAGE_SIZE = 50;

/** The error of a serverId that names no server the caller may see: an invisible server is not admitted to exist. */
export const serverNotFound = (serverId: string): ApiError =>
  new ApiError(ErrorCode.NOT_FOUND, `MCP virtual server ${serverId} not found`);

/** `/mcp-servers`: defining, reading, changing and deleting virtual servers. Served bare and under /v1. */
export function createVirtualServerRoutes(deps: VirtualServerDeps): RouteModule {
  const { servers, agents, directory } = deps;
  const router = new DocumentedRouter(VIRTUAL_SERVER_ROUTES);

  /** The entries, when each names a tool of an agent `principal` may see, under a name of its own; else 400 naming those that do not. */
  async function checkedTools(principal: Principal, tools: VirtualToolEntry[]): Promise<VirtualToolEntry[]> {
    const { problems } = await resolveEntries(directory, principal, tools);
    if (problems.length > 0) throw invalid(`Invalid MCP virtual server: ${summariseProblems(problems, 3)}`, problems);
    return tools;
  }

  /** The caller, and the server of the route if the caller may see it (else 404). */
  async function visibleServer(ctx: RouterContext): Promise<{ principal: Principal; server: VirtualServer }> {
    const principal = requirePrincipal(ctx);
    const server = await servers.findVisible(principal, ctx.params.serverId);
    if (!server) throw serverNotFound(ctx.params.serverId);
    return { principal, server };
  }

  router.serve('POST /mcp-servers', async (ctx) => {
    const principal = requireKind(ctx, PrincipalKind.ADMIN, PrincipalKind.SERVICE, PrincipalKind.HUMAN);
    const body = checkCreate(ctx.request.body);
    const now = new Date();
    const server: VirtualServer = {
      id: randomUUID(),
      name: body.name,
      description: body.description ?? '',
      tools: await checkedTools(principal, body.tools),
      visibility: body.visibility ?? 'private',
      sharedWith: (await typedSharing(body.sharedWith, agents)) ?? [],
      ...(principal.kind === PrincipalKind.ADMIN ? {} : { owner: { kind: principal.kind, id: principal.id } }),
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    await servers.insert(server);
    ctx.status = 201;
    ctx.set('Location', `/mcp-servers/${server.id}`);
    ctx.body = serverView(server, principal);
  });

  router.serve('GET /mcp-servers', async (ctx) => {
    const principal = requirePrincipal(ctx);
    const query = checkListQuery(ctx.query);
    const limit = query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit);
    const found = await servers.listVisible(principal, { limit, after: query.after });
    ctx.body = found.map((server) => serverView(server, principal));
  });

  router.serve('GET /mcp-servers/:serverId', async (ctx) => {
    const { principal, server } = await visibleServer(ctx);
    ctx.body = serverView(server, principal);
  });

  router.serve('PATCH /mcp-servers/:serverId', async (ctx) => {
    const { principal, server } = await visibleServer(ctx);
    if (!canManageAgent(principal, server))
      throw forbidden('Only the owner of a virtual server or an admin may change it');
    const update = checkUpdate(ctx.request.body);
    const updated: VirtualServer = {
      ...server,
      ...(update.name === undefined ? {} : { name: update.name }),
      ...(update.description === undefined ? {} : { description: update.description }),
      ...(update.tools === undefined ? {} : { tools: await checkedTools(principal, update.tools) }),
      ...(update.visibility === undefined ? {} : { visibility: update.visibility }),
      ...(update.sharedWith === undefined ? {} : { sharedWith: (await typedSharing(update.sharedWith, agents)) ?? [] }),
      version: server.version + 1,
      updatedAt: new Date(),
    };
    if (!(await servers.replace(updated, server.version)))
      throw new ApiError(
        ErrorCode.CONFLICT,
        `MCP virtual server ${server.id} was changed or deleted meanwhile; read it again and retry`,
      );
    ctx.body = serverView(updated, principal);
  });

  router.serve('DELETE /mcp-servers/:serverId', async (ctx) => {
    const { principal, server } = await visibleServer(ctx);
    if (!canManageAgent(principal, server))
      throw forbidden('Only the owner of a virtual server or an admin may delete it');
    await servers.delete(server.id);
    ctx.status = 204;
  });

  return router.module();
}

/** A virtual server as the API shows it; who owns it and whom it is shared with only its managers see, as for agents. */
function serverView(server: VirtualServer, principal: Principal) {
  return {
    serverId: server.id,
    name: server.name,
    description: server.description,
    url: `/mcp/${server.id}`,
    tools: server.tools,
    visibility: server.visibility,
    version: server.version,
    createdAt: server.createdAt.toISOString(),
    updatedAt: server.updatedAt.toISOString(),
    ...(canManageAgent(principal, server)
      ? { owner: server.owner ? principalRef(server.owner) : null, sharedWith: server.sharedWith }
      : {}),
  };
}
