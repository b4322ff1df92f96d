import { randomUUID } from 'node:crypto';
import { OPERATIONS } from '../src/http/openapi';
import { agentRegistration } from './support/agents';
import { call, expectError } from './support/http';

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
    const documented = Object.values(reply.body.paths as Record<string, object>).reduce(
      (count, methods) => count + Object.keys(methods).length,
      0,
    );
    expect(documented).toBe(OPERATIONS.reduce((count, operation) => count + (operation.versioned ? 2 : 1), 0));
  });

  it('marks mcpUrl and chatUrl required for POST /agents, as the server does, and their aliases deprecated', async () => {
    const reply = await call('GET', '/openapi.json');
    for (const path of ['/agents', '/v1/agents']) {
      const schema = reply.body.paths[path].post.requestBody.content['application/json'].schema;
      expect(schema.required).toEqual(
        expect.arrayContaining(['name', 'description', 'defaultPrompt', 'capabilities', 'mcpUrl', 'chatUrl']),
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

  it.each(OPERATIONS.map((operation) => [operation.method.toUpperCase(), operation.path] as const))(
    'documents only routes the service serves: %s %s',
    async (method, path) => {
      const concrete = path.replace(/\{\w+\}/g, randomUUID());
      const reply = await call(method, concrete, {
        apiKey: 'admin',
        ...(method === 'POST' || method === 'PATCH' ? { body: {} } : {}),
      });
      expect(reply.status).toBeLessThan(500);
      expect(String(reply.body?.error?.message ?? '')).not.toMatch(/^No route for/);
      expect(reply.status).not.toBe(405);
    },
  );
});
