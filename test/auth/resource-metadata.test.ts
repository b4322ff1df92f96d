import { listTools } from '../../examples/mcp-client';
import { call, expectError } from '../support/http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { registerAgent, registerAgentWith } from '../support/agents';
import { hs256Token, humanHeaders, newUserId } from '../support/humans';
import { newServiceKey } from '../support/keys';
import { testStack } from '../support/test-stack';

const METADATA = '/.well-known/oauth-protected-resource';
const challengeOf = (resourcePath: string) =>
  `Bearer resource_metadata="${testStack().baseUrl}${METADATA}${resourcePath}"`;

describe('protected resource metadata (RFC 9728)', () => {
  it('describes the API and each MCP endpoint by its absolute URL; with no AUTH_ISSUER, names no authorization server', async () => {
    for (const resourcePath of ['', '/mcp', '/mcp/some-server']) {
      const reply = await call('GET', `${METADATA}${resourcePath}`);
      expect({ status: reply.status, body: reply.body }).toEqual({
        status: 200,
        body: {
          resource: `${testStack().baseUrl}${resourcePath}`,
          bearer_methods_supported: ['header'],
          resource_name: expect.any(String),
        },
      });
    }
  });

  it('lets clients and caches keep it: Cache-Control with a max-age, an ETag, 304 on If-None-Match', async () => {
    const first = await call('GET', `${METADATA}/mcp`);
    expect(first.headers.get('cache-control')).toBe('public, max-age=3600');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const unchanged = await call('GET', `${METADATA}/mcp`, { headers: { 'if-none-match': etag! } });
    expect({ status: unchanged.status, body: unchanged.body }).toEqual({ status: 304, body: '' });
    expect((await call('GET', METADATA)).headers.get('etag')).not.toBe(etag);
  });

  it('answers 404 to a suffix that names no MCP endpoint', async () => {
    for (const suffix of ['/agents', '/mcp/a/b', '/mcp/']) {
      expectError(await call('GET', `${METADATA}${suffix}`), 404, 'NOT_FOUND');
    }
  });
});

describe('WWW-Authenticate on 401', () => {
  it('names the metadata of the API on its routes, bare, under /v1 and on the A2A endpoints', async () => {
    const refused = [
      await call('GET', '/agents'),
      await call('GET', '/v1/agents', { apiKey: 'not-a-key' }),
      await call('POST', '/tasks', { body: {} }),
      await call('GET', '/agents', { headers: { authorization: `Bearer ${await hs256Token('u1', 'session')}` } }),
      await call('POST', '/a2a', { body: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } } }),
    ];
    for (const reply of refused) {
      expectError(reply, 401, 'UNAUTHENTICATED');
      expect(reply.headers.get('www-authenticate')).toBe(challengeOf(''));
    }
  });

  it("names an MCP endpoint's own metadata on its paths", async () => {
    for (const resourcePath of ['/mcp', '/mcp/some-server']) {
      const reply = await call('POST', resourcePath, { headers: { authorization: 'Bearer not-a-key' }, body: {} });
      expectError(reply, 401, 'UNAUTHENTICATED');
      expect(reply.headers.get('www-authenticate')).toBe(challengeOf(resourcePath));
    }
  });
});

/** The tools the official SDK's client lists on /mcp with `Authorization: Bearer <token>` alone; rejects on a refusal. */
async function toolsListedWith(token: string): Promise<Tool[]> {
  const transport = new StreamableHTTPClientTransport(new URL(`${testStack().baseUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'bearer-test', version: '1.0.0' });
  try {
    await client.connect(transport);
    // Every page: a full suite's public agents fill more than the first.
    return await listTools(client);
  } finally {
    await client.close();
  }
}

/** The agents whose tools `tools` are (the registry's own tools name none). */
const agentsOf = (tools: Tool[]) =>
  tools.flatMap((listed) => {
    const agent = listed._meta?.['dev.agent-coordination-service/agent'] as { agentId: string } | undefined;
    return agent ? [agent.agentId] : [];
  });

describe('one Authorization: Bearer on the MCP endpoints', () => {
  it("takes an API key or a person's access token alone there, as that principal, and nowhere else", async () => {
    const service = await newServiceKey();
    const user = newUserId();
    const accessToken = await hs256Token(user, 'session');
    const [byService, byUser] = await Promise.all([
      registerAgent({ visibility: 'private' }, service.key),
      registerAgentWith({ headers: await humanHeaders(user) }, { visibility: 'private' }),
    ]);
    const [serviceSees, userSees] = [
      agentsOf(await toolsListedWith(service.key)),
      agentsOf(await toolsListedWith(accessToken)),
    ];
    expect([serviceSees.includes(byService.agentId), serviceSees.includes(byUser.agentId)]).toEqual([true, false]);
    expect([userSees.includes(byUser.agentId), userSees.includes(byService.agentId)]).toEqual([true, false]);

    for (const token of [service.key, accessToken]) {
      expectError(
        await call('GET', '/agents', { headers: { authorization: `Bearer ${token}` } }),
        401,
        'UNAUTHENTICATED',
      );
    }
    await expect(toolsListedWith(await hs256Token(user, 'identity'))).rejects.toThrow();
  });
});
