import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { registerAgentWith, registerAgent } from '../support/agents';
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
    const card = await resolveCard(testStack().baseUrl);
    expect(card.name).toBe('Agent coordination service');
    expect(card.skills.map((skill) => skill.id)).toEqual(['search-agents']);
  });
});
