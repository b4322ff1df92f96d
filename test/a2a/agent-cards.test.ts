import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { registerAgentWith, registerAgent } from '../support/agents';
import { useCardServer } from '../support/card-server';
import { call, expectError } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';
import { tool } from '../support/tasks';
import { testStack } from '../support/test-stack';

const TOOL_SCHEMAS = 'https://agent-coordination-service.dev/a2a/extensions/tool-schemas/v1';

/** The A2A SDK's own discovery of the card under `base`, its requests sent with `headers`. */
function resolveCard(base: string, headers: Record<string, string> = {}) {
  const fetchImpl: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } });
  return new DefaultAgentCardResolver({ fetchImpl }).resolve(base);
}

describe('A2A Agent Cards', () => {
  it("serves a public agent's card to anyone, as the A2A SDK reads it", async () => {
    const agent = await registerAgent({
      capabilities: { tools: [tool('translate', { text: { type: 'string' } }), tool('summarise')] },
    });
    const { baseUrl } = testStack();
    // The SDK resolves the card path against the base URL: the trailing slash keeps the agent id.
    const card = await resolveCard(`${baseUrl}/agents/${agent.agentId}/`);
    expect(card).toMatchObject({
      name: agent.name,
      description: agent.description,
      version: String(agent.version),
      supportedInterfaces: [
        { url: `${baseUrl}/a2a/${agent.agentId}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      ],
      defaultInputModes: ['application/json'],
      defaultOutputModes: ['application/json'],
    });
    expect(card.skills.map((skill) => [skill.id, skill.description])).toEqual([
      ['translate', 'test tool translate'],
      ['summarise', 'test tool summarise'],
    ]);
    const schemas = card.capabilities?.extensions.find((extension) => extension.uri === TOOL_SCHEMAS);
    expect(schemas?.params).toMatchObject({
      inputSchemas: { translate: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    });
    expect(Object.keys(card.securitySchemes).sort()).toEqual(['apiKey', 'bearer']);
    expect(card.securitySchemes.apiKey.scheme).toMatchObject({
      $case: 'apiKeySecurityScheme',
      value: { location: 'header', name: 'X-Api-Key' },
    });
  });

  it("serves a private agent's card only to those who may see the agent: 404 to others", async () => {
    const owner = newUserId();
    const agent = await registerAgentWith({ headers: await humanHeaders(owner) }, { visibility: 'private' });
    const path = `/agents/${agent.agentId}/.well-known/agent-card.json`;
    expectError(await call('GET', path), 404, 'AGENT_NOT_FOUND');
    expectError(await call('GET', path, { headers: await humanHeaders(newUserId()) }), 404, 'AGENT_NOT_FOUND');
    expect((await call('GET', path, { headers: await humanHeaders(owner) })).body).toMatchObject({ name: agent.name });
    expect((await call('GET', path, { apiKey: 'admin' })).status).toBe(200);
    expectError(await call('GET', '/agents/no-such-agent/.well-known/agent-card.json'), 404, 'AGENT_NOT_FOUND');
  });

  it('describes the service itself at /.well-known/agent-card.json: a directory whose skill is searching it', async () => {
    const { baseUrl } = testStack();
    const card = await resolveCard(baseUrl);
    expect(card.name).toBe('Agent coordination service');
    expect(card.skills.map((skill) => skill.id)).toEqual(['search-agents']);
    expect(card.supportedInterfaces).toEqual([
      expect.objectContaining({ url: `${baseUrl}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }),
    ]);
    const schemas = card.capabilities?.extensions.find((extension) => extension.uri === TOOL_SCHEMAS);
    expect(schemas?.params?.inputSchemas).toHaveProperty(['search-agents', 'properties', 'capability']);
  });

  it('lets clients and caches keep both cards: Cache-Control with a max-age, an ETag, 304 on If-None-Match', async () => {
    const agent = await registerAgent();
    for (const path of [`/agents/${agent.agentId}/.well-known/agent-card.json`, '/.well-known/agent-card.json']) {
      const first = await call('GET', path);
      expect(first.status).toBe(200);
      expect(first.headers.get('cache-control')).toBe('public, max-age=300');
      const etag = first.headers.get('etag');
      expect(etag).toMatch(/^"[\w-]+"$/);
      expect((await call('GET', path)).headers.get('etag')).toBe(etag);

      const unchanged = await call('GET', path, { headers: { 'if-none-match': etag! } });
      expect(unchanged.status).toBe(304);
      expect(unchanged.body).toBe('');
      expect(unchanged.headers.get('etag')).toBe(etag);
      expect(unchanged.headers.get('cache-control')).toBe('public, max-age=300');
      const other = await call('GET', path, { headers: { 'if-none-match': '"another"' } });
      expect(other.status).toBe(200);
      expect(other.body).toMatchObject({ name: expect.any(String) });
    }
  });

  it("changes an agent's ETag with the agent, and keeps a private agent's card out of shared caches", async () => {
    const agent = await registerAgent();
    const path = `/agents/${agent.agentId}/.well-known/agent-card.json`;
    const before = (await call('GET', path)).headers.get('etag')!;
    const changed = await call('PATCH', `/agents/${agent.agentId}`, {
      apiKey: 'admin',
      body: { description: 'Echoes what it is given, twice' },
    });
    expect(changed.status).toBe(200);
    const after = await call('GET', path, { headers: { 'if-none-match': before } });
    expect(after.status).toBe(200);
    expect(after.body.description).toBe('Echoes what it is given, twice');
    expect(after.headers.get('etag')).not.toBe(before);

    const owner = newUserId();
    const hidden = await registerAgentWith({ headers: await humanHeaders(owner) }, { visibility: 'private' });
    const card = await call('GET', `/agents/${hidden.agentId}/.well-known/agent-card.json`, {
      headers: await humanHeaders(owner),
    });
    expect(card.status).toBe(200);
    expect(card.headers.get('cache-control')).toBe('private, max-age=300');
    // Refused, it is not for any cache.
    const refused = await call('GET', `/agents/${hidden.agentId}/.well-known/agent-card.json`);
    expect(refused.status).toBe(404);
    expect(refused.headers.get('cache-control')).toBe('no-store');
  });
});

describe("an A2A agent whose card gives its skills' schemas in JSON Schema 2020-12", () => {
  const inputSchema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: { coordinate: { type: 'number' } },
    properties: {
      at: { type: 'array', prefixItems: [{ $ref: '#/$defs/coordinate' }, { $ref: '#/$defs/coordinate' }] },
    },
    required: ['at'],
    unevaluatedProperties: false,
  };
  const cardUrl = useCardServer({
    name: 'plotter',
    description: 'plots points',
    version: '1',
    capabilities: { extensions: [{ uri: TOOL_SCHEMAS, params: { inputSchemas: { plot: inputSchema } } }] },
    skills: [{ id: 'plot', name: 'plot', description: 'plots a point' }],
  });

  it('imports the skill with its schema as sent, serves it unchanged in its card here, and checks params with it', async () => {
    const agent = await registerAgent({ protocol: 'a2a', mcpUrl: cardUrl(), capabilities: undefined });
    expect(agent.warnings).toEqual([]);
    expect(JSON.stringify(agent.capabilities.tools[0].inputSchema)).toBe(JSON.stringify(inputSchema));
    const card = await call('GET', `/agents/${agent.agentId}/.well-known/agent-card.json`, { apiKey: 'admin' });
    const schemas = card.body.capabilities.extensions.find(
      (extension: { uri: string }) => extension.uri === TOOL_SCHEMAS,
    );
    expect(JSON.stringify(schemas.params.inputSchemas.plot)).toBe(JSON.stringify(inputSchema));

    const refused = await call('POST', '/tasks', {
      apiKey: 'admin',
      body: { agentId: agent.agentId, operation: 'tools/plot', params: { at: [1, 2], colour: 'red' } },
    });
    expect(expectError(refused, 400, 'VALIDATION_ERROR').details).toEqual([
      { path: '/', message: 'unknown property "colour"' },
    ]);
  });
});
