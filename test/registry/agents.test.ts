import { MongoClient } from 'mongodb';
import { agentRegistration, registerAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { testStack } from '../support/test-stack';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let mongo: MongoClient;
beforeAll(async () => {
  mongo = await MongoClient.connect(testStack().mongoUri);
});
afterAll(() => mongo.close());
const storedAgent = (agentId: string) => mongo.db(testStack().mongoDatabase).collection('agents').findOne({ _id: agentId as never });

describe('POST /agents', () => {
  it('registers an agent and answers 201 with shapes A and B, apiKey and signingSecret', async () => {
    const body = agentRegistration({ imageUrl: 'https://example.com/a.png', websiteUrl: 'https://example.com' });
    const reply = await call('POST', '/agents', { apiKey: 'admin', body });
    expect(reply.status).toBe(201);
    const agent = reply.body;
    expect(agent).toMatchObject({
      name: body.name,
      status: 'active',
      description: body.description,
      defaultPrompt: body.defaultPrompt,
      imageUrl: 'https://example.com/a.png',
      backgroundImageUrl: null,
      websiteUrl: 'https://example.com',
      mcpUrl: body.mcpUrl,
      chatUrl: body.chatUrl,
      capabilities: body.capabilities,
      visibility: 'public',
    });
    expect(agent.agentId).toMatch(UUID);
    expect(agent.id).toBe(agent.agentId);
    expect(agent.createdAt).toMatch(ISO);
    expect(agent.updatedAt).toBe(agent.createdAt);
    expect(agent.apiKey).toMatch(/^acs_/);
    expect(agent.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(agent.signingSecret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(reply.headers.get('location')).toBe(`/agents/${agent.agentId}`);

    const stored = await storedAgent(agent.agentId);
    expect(stored).toMatchObject({ name: body.name, operations: ['tools/echo'], signingSecret: agent.signingSecret, version: 1 });
    expect(stored!.searchTokens).toEqual(expect.arrayContaining(['echo', 'echoes', 'returns', 'text']));
    expect(JSON.parse(stored!.capabilities)).toEqual(body.capabilities);
  });

  it('serves the same route under /v1', async () => {
    const reply = await call('POST', '/v1/agents', { apiKey: 'admin', body: agentRegistration() });
    expect(reply.status).toBe(201);
    expect((await call('GET', `/v1/agents/${reply.body.agentId}`, { apiKey: 'admin' })).status).toBe(200);
  });

  it('issues an agent key that authenticates as the agent', async () => {
    const agent = await registerAgent();
    const reply = await call('GET', `/agents/${agent.agentId}`, { apiKey: agent.apiKey });
    expect(reply.status).toBe(200);
    expect(reply.body.agentId).toBe(agent.agentId);
  });

  it('answers 401 without a credential and with an unknown key', async () => {
    expectError(await call('POST', '/agents', { body: agentRegistration() }), 401, 'UNAUTHENTICATED');
    expectError(await call('POST', '/agents', { apiKey: 'acs_AAAAAAAAAAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', body: agentRegistration() }), 401, 'UNAUTHENTICATED');
  });

  it('answers 403 to an agent key', async () => {
    const agent = await registerAgent();
    expectError(await call('POST', '/agents', { apiKey: agent.apiKey, body: agentRegistration() }), 403, 'FORBIDDEN');
  });
});

describe('GET /agents/{id}', () => {
  it('returns the agent without secrets', async () => {
    const agent = await registerAgent();
    const reply = await call('GET', `/agents/${agent.agentId}`, { apiKey: 'admin' });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ agentId: agent.agentId, id: agent.agentId, name: agent.name, status: 'active', createdAt: agent.createdAt });
    expect(reply.body).not.toHaveProperty('apiKey');
    expect(reply.body).not.toHaveProperty('signingSecret');
  });

  it('answers 404 AGENT_NOT_FOUND for an unknown id and 401 without a credential', async () => {
    expectError(await call('GET', '/agents/00000000-0000-4000-8000-000000000000', { apiKey: 'admin' }), 404, 'AGENT_NOT_FOUND');
    expectError(await call('GET', '/agents/not-a-uuid', { apiKey: 'admin' }), 404, 'AGENT_NOT_FOUND');
    const agent = await registerAgent();
    expectError(await call('GET', `/agents/${agent.agentId}`), 401, 'UNAUTHENTICATED');
  });
});
