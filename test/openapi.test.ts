import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import type Router from '@koa/router';
import type Koa from 'koa';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { apiModules, type ApiParts } from '../src/service/api-modules';
import { createApp } from '../src/service/app';
import type { RouteModule } from '../src/http/route-module';
import { createOpsRoutes } from '../src/service/ops-routes';
import { createLogger } from '../src/ops/logger';
import { createMetrics } from '../src/ops/metrics';
import { createRoomRoutes } from '../src/rooms/routes';
import { createWebAppRoutes } from '../src/web-app/routes';
import { documentedPath, openApiDocument } from '../src/service/openapi';
import { agentRegistration, registerAgent } from './support/agents';
import { call, expectError } from './support/http';
import { useMcpServer } from './support/mcp-server';

const TOKEN = `Bearer openapi-${randomUUID()}`;
/** Whether the MCP server below lists its second tool: a refresh after a change sees it. */
let listsSecondTool = false;

function tools(server: McpServer): void {
  server.registerTool('lookup', { description: 'Looks a word up', inputSchema: { word: z.string() } }, ({ word }) => ({
    content: [{ type: 'text', text: word }],
  }));
  if (listsSecondTool)
    server.registerTool('spell', { description: 'Spells a word', inputSchema: { word: z.string() } }, ({ word }) => ({
      content: [{ type: 'text', text: [...word].join('-') }],
    }));
}

/**
 * Dependencies no handler is called with: the routes are only walked. Whatever is read of it, or
 * called on it while the modules are built, is the stand-in again.
 */
const standIn: never = new Proxy(() => undefined, { get: () => standIn, apply: () => standIn }) as never;

/** Every route module the service mounts, from the assembly's own list. */
const mountedModules = (): RouteModule[] => {
  const roomRoutes = createRoomRoutes(standIn);
  return apiModules(new Proxy({} as ApiParts, { get: (_parts, key) => (key === 'roomRoutes' ? roomRoutes : standIn) }));
};

/** `METHOD /path` of every route the app serves, read from its routers' layers (the /v1 copies included). */
function servedRoutes(app: Koa): string[] {
  return app.middleware
    .flatMap((middleware) => (middleware as { router?: Router }).router?.stack ?? [])
    .flatMap((layer) =>
      layer.methods
        .filter((method) => method !== 'HEAD')
        .map((method) => `${method} ${documentedPath(String(layer.path))}`),
    );
}

/** `METHOD /path` of every operation of the document. */
const documentedRoutes = (document: Record<string, unknown>): string[] =>
  Object.entries(document.paths as Record<string, object>).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );

describe('the OpenAPI document and the routes the app serves', () => {
  const metrics = createMetrics();
  const app = createApp({
    logger: createLogger({ logLevel: 'silent' }),
    metrics,
    maxBodyBytes: 1024,
    authenticator: { middleware: () => (_ctx: unknown, next: () => Promise<void>) => next() } as never,
    limits: standIn,
    opsRouter: createOpsRoutes([], metrics, { document: {} }),
    webAppRouter: createWebAppRoutes({ temporalNamespace: 'default' }, new Map()),
    modules: mountedModules(),
    errorMappers: [],
  });

  it('documents every route the app serves, and the app serves every documented operation', () => {
    const served = servedRoutes(app);
    const documented = documentedRoutes(openApiDocument());
    expect(served.length).toBeGreaterThan(50);
    expect(served.filter((route) => !documented.includes(route))).toEqual([]);
    expect(documented.filter((route) => !served.includes(route))).toEqual([]);
  });
});

describe('GET /openapi.json', () => {
  it('serves an OpenAPI 3.1 document with every operation, versioned ones under /v1 too', async () => {
    const reply = await call('GET', '/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toBe('3.1.0');
    expect(reply.body.paths['/tasks'].post.requestBody.content['application/json'].schema.required).toEqual([
      'agentId',
      'operation',
      'params',
    ]);
    expect(Object.keys(reply.body.paths['/v1/tasks/compose'])).toEqual(['post']);
    expect(
      reply.body.paths['/rooms/{roomId}/messages'].get.parameters.map((parameter: { name: string }) => parameter.name),
    ).toEqual(expect.arrayContaining(['roomId', 'limit', 'before']));
    expect(reply.body).toEqual(openApiDocument());
  });

  it('marks mcpUrl and chatUrl required for POST /agents, as the server does, and their aliases deprecated', async () => {
    const reply = await call('GET', '/openapi.json');
    for (const path of ['/agents', '/v1/agents']) {
      const schema = reply.body.paths[path].post.requestBody.content['application/json'].schema;
      expect(schema.required).toEqual(
        expect.arrayContaining(['name', 'description', 'defaultPrompt', 'mcpUrl', 'chatUrl']),
      );
      expect(schema.properties.mcpEndpoint).toMatchObject({
        deprecated: true,
        description: expect.stringContaining('mcpUrl'),
      });
      expect(schema.properties.chatEndpoint).toMatchObject({
        deprecated: true,
        description: expect.stringContaining('chatUrl'),
      });
    }
    const { mcpUrl: _mcpUrl, ...withoutMcpUrl } = agentRegistration();
    expectError(await call('POST', '/agents', { apiKey: 'admin', body: withoutMcpUrl }), 400, 'VALIDATION_ERROR');
    const { chatUrl: _chatUrl, ...withoutChatUrl } = agentRegistration();
    expectError(await call('POST', '/agents', { apiKey: 'admin', body: withoutChatUrl }), 400, 'VALIDATION_ERROR');
  });

  it.each(documentedRoutes(openApiDocument()).map((route) => route.split(' ') as [string, string]))(
    'documents only routes the service serves: %s %s',
    async (method, path) => {
      const concrete = path.replace(/\{\w+\}/g, randomUUID());
      const reply = await call(method, concrete, {
        apiKey: 'admin',
        ...(method === 'POST' || method === 'PATCH' ? { body: {} } : {}),
      });
      expect(reply.status).toBeLessThan(500);
      expect(String(reply.body?.error?.message ?? '')).not.toMatch(/^No route for/);
      // A 405 of the router says the route is not served; one the operation documents is its own answer.
      const documents405 = (openApiDocument() as any).paths[path]?.[method.toLowerCase()]?.responses?.['405'];
      if (documents405 === undefined) expect(reply.status).not.toBe(405);
    },
  );

  it('requires capabilities unless protocol is mcp or a2a, as the server does, and describes protocol and headers', async () => {
    const reply = await call('GET', '/openapi.json');
    const schema = reply.body.paths['/agents'].post.requestBody.content['application/json'].schema;
    expect(schema.properties.protocol).toMatchObject({ enum: ['acs', 'mcp', 'a2a'], description: expect.any(String) });
    expect(schema.properties.headers).toMatchObject({
      type: 'object',
      writeOnly: true,
      description: expect.any(String),
    });
    const patch = reply.body.paths['/agents/{agentId}'].patch.requestBody.content['application/json'].schema;
    expect(patch.properties.headers).toMatchObject({ writeOnly: true });

    // The document's schema, read as a client would, says what the server does.
    const documented = new Ajv2020({ validateFormats: false }).compile(schema);
    const { capabilities: _capabilities, ...withoutCapabilities } = agentRegistration();
    expect(documented(agentRegistration())).toBe(true);
    expect(documented(withoutCapabilities)).toBe(false);
    expect(documented({ ...withoutCapabilities, protocol: 'acs' })).toBe(false);
    expect(documented({ ...withoutCapabilities, protocol: 'mcp' })).toBe(true);
    expect(documented({ ...withoutCapabilities, protocol: 'a2a' })).toBe(true);
    expectError(await call('POST', '/agents', { apiKey: 'admin', body: withoutCapabilities }), 400, 'VALIDATION_ERROR');
    expectError(
      await call('POST', '/agents', { apiKey: 'admin', body: { ...withoutCapabilities, protocol: 'acs' } }),
      400,
      'VALIDATION_ERROR',
    );
    // Nothing listens on the discard port: the server's capabilities cannot be read.
    expectError(
      await call('POST', '/agents', { apiKey: 'admin', body: { ...withoutCapabilities, protocol: 'mcp' } }),
      422,
      'CAPABILITY_IMPORT_FAILED',
    );
    expect(reply.body.paths['/agents'].post.responses['422'].description).toMatch(/^CAPABILITY_IMPORT_FAILED/);
  });

  describe('POST /agents/{agentId}/capabilities/refresh', () => {
    const mcp = useMcpServer({ setup: tools, requiredHeaders: { authorization: TOKEN } });

    it('is documented bare and under /v1, with its 422', async () => {
      const reply = await call('GET', '/openapi.json');
      for (const path of ['/agents/{agentId}/capabilities/refresh', '/v1/agents/{agentId}/capabilities/refresh']) {
        const operation = reply.body.paths[path].post;
        expect(operation.parameters.map((parameter: { name: string }) => parameter.name)).toEqual(['agentId']);
        expect(operation.requestBody).toBeUndefined();
        expect(operation.responses['200'].description).toMatch(/warnings/);
        expect(operation.responses['409'].description).toMatch(/CONFLICT/);
        expect(operation.responses['422'].description).toMatch(/^CAPABILITY_IMPORT_FAILED/);
      }
    });

    it('answers as documented: the record with protocol, headerNames and warnings, the version raised only by a change', async () => {
      listsSecondTool = false;
      const { capabilities: _capabilities, ...withoutCapabilities } = agentRegistration();
      const registered = await call('POST', '/agents', {
        apiKey: 'admin',
        body: { ...withoutCapabilities, protocol: 'mcp', mcpUrl: mcp().url, headers: { Authorization: TOKEN } },
      });
      expect(registered.status).toBe(201);
      expect(registered.body).toMatchObject({ protocol: 'mcp', headerNames: ['Authorization'], warnings: [] });
      expect(registered.body.capabilities.tools.map((tool: { name: string }) => tool.name)).toEqual(['lookup']);
      const { agentId, version } = registered.body;
      const path = `/v1/agents/${agentId}/capabilities/refresh`;

      const unchanged = await call('POST', path, { apiKey: 'admin' });
      expect(unchanged.status).toBe(200);
      expect(unchanged.body).toMatchObject({ agentId, protocol: 'mcp', headerNames: ['Authorization'], warnings: [] });
      expect(unchanged.body.version).toBe(version);

      listsSecondTool = true;
      const changed = await call('POST', path, { apiKey: 'admin' });
      expect(changed.status).toBe(200);
      expect(changed.body.version).toBe(version + 1);
      expect(changed.body.capabilities.tools.map((tool: { name: string }) => tool.name).sort()).toEqual([
        'lookup',
        'spell',
      ]);
      // The header went to the server (it answers 401 without) and comes back in no answer.
      expect(mcp().requests.every((request) => request.headers.authorization === TOKEN)).toBe(true);
      for (const answer of [registered, unchanged, changed]) expect(JSON.stringify(answer.body)).not.toContain(TOKEN);
    });

    it('answers 409 for an acs agent, 404 for an unknown one, 422 when the server cannot be read', async () => {
      const acs = await registerAgent();
      expect(acs.protocol).toBe('acs');
      expectError(
        await call('POST', `/agents/${acs.agentId}/capabilities/refresh`, { apiKey: 'admin' }),
        409,
        'CONFLICT',
      );
      expectError(
        await call('POST', `/agents/${randomUUID()}/capabilities/refresh`, { apiKey: 'admin' }),
        404,
        'AGENT_NOT_FOUND',
      );
      // Registered with its capabilities by hand, and without the header its server asks for.
      const unreadable = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url });
      expectError(
        await call('POST', `/agents/${unreadable.agentId}/capabilities/refresh`, { apiKey: 'admin' }),
        422,
        'CAPABILITY_IMPORT_FAILED',
      );
      const after = await call('GET', `/agents/${unreadable.agentId}`, { apiKey: 'admin' });
      expect(after.body).toMatchObject({ version: unreadable.version, capabilities: unreadable.capabilities });
    });
  });
});
