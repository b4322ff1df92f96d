import { registerAgent, registerAgentWith } from '../support/agents';
import { openedSigningSecret, useTestDatabase } from '../support/database';
import { call, expectError } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';

const database = useTestDatabase();

describe('PATCH /agents/{id}', () => {
  it('changes the given fields, bumps version and updatedAt, and keeps the rest', async () => {
    const agent = await registerAgent();
    const tools = [
      {
        name: 'shout',
        description: 'Says it loud',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      },
    ];
    const reply = await call('PATCH', `/agents/${agent.agentId}`, {
      apiKey: 'admin',
      body: { description: 'Now shouts', capabilities: { tools } },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      agentId: agent.agentId,
      name: agent.name,
      description: 'Now shouts',
      capabilities: { tools },
      version: 2,
      createdAt: agent.createdAt,
    });
    expect(Date.parse(reply.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(agent.updatedAt));

    const stored = await database()
      .collection('agents')
      .findOne({ _id: agent.agentId as never });
    expect(stored).toMatchObject({ description: 'Now shouts', operations: ['tools/shout'], version: 2 });
    expect(openedSigningSecret(stored)).toBe(agent.signingSecret);
    expect(stored!.searchTokens).toContain('shout');
    expect(stored!.searchTokens).not.toContain('echo');
    // The agent key still works after a change.
    expect((await call('GET', `/agents/${agent.agentId}`, { apiKey: agent.apiKey })).status).toBe(200);
  });

  it('applies concurrent changes one version at a time: no two are answered 200 for the same version, none is lost', async () => {
    const agent = await registerAgent();
    let version = agent.version;
    for (let round = 0; round < 5; round += 1) {
      const descriptions = Array.from({ length: 8 }, (_, writer) => `round ${round} writer ${writer}`);
      const replies = await Promise.all(
        descriptions.map((description) =>
          call('PATCH', `/agents/${agent.agentId}`, { apiKey: 'admin', body: { description } }),
        ),
      );
      const winners = replies
        .filter((reply) => reply.status === 200)
        .map((reply) => ({ version: reply.body.version, description: reply.body.description }));
      expect(replies.filter((reply) => reply.status !== 200).map((reply) => reply.body.error?.code)).toEqual(
        Array(8 - winners.length).fill('CONFLICT'),
      );
      // A request that read the agent after another's change builds on it; two built on the same version would lose one.
      winners.sort((a, b) => a.version - b.version);
      expect(winners.map((winner) => winner.version)).toEqual(winners.map((_, position) => version + 1 + position));
      version += winners.length;
      const stored = await call('GET', `/agents/${agent.agentId}`, { apiKey: 'admin' });
      expect({ description: stored.body.description, version: stored.body.version }).toEqual(winners.at(-1));
    }
  });

  it('resolves the endpoint aliases', async () => {
    const agent = await registerAgent();
    const reply = await call('PATCH', `/v1/agents/${agent.agentId}`, {
      apiKey: 'admin',
      body: { mcpEndpoint: 'http://127.0.0.1:9/v2/mcp' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.mcpUrl).toBe('http://127.0.0.1:9/v2/mcp');
  });

  it('re-validates: bad fields, bad schemas and duplicate tool names are refused and nothing changes', async () => {
    const agent = await registerAgent();
    const path = `/agents/${agent.agentId}`;
    expectError(await call('PATCH', path, { apiKey: 'admin', body: {} }), 400, 'VALIDATION_ERROR');
    expectError(await call('PATCH', path, { apiKey: 'admin', body: { name: '' } }), 400, 'VALIDATION_ERROR');
    expectError(await call('PATCH', path, { apiKey: 'admin', body: { chatUrl: 'nope' } }), 400, 'VALIDATION_ERROR');
    expectError(
      await call('PATCH', path, {
        apiKey: 'admin',
        body: { mcpUrl: 'http://127.0.0.1:9/a', mcpEndpoint: 'http://127.0.0.1:9/b' },
      }),
      400,
      'VALIDATION_ERROR',
    );
    const badSchema = { tools: [{ name: 'x', description: 'y', inputSchema: { type: 'object', required: 'x' } }] };
    expect(
      expectError(
        await call('PATCH', path, { apiKey: 'admin', body: { capabilities: badSchema } }),
        400,
        'VALIDATION_ERROR',
      ).message,
    ).toMatch(/"x"/);
    const tool = { name: 'twin', description: 'y', inputSchema: { type: 'object' } };
    expectError(
      await call('PATCH', path, { apiKey: 'admin', body: { capabilities: { tools: [tool, tool] } } }),
      409,
      'CONFLICT',
    );
    const unchanged = await call('GET', path, { apiKey: 'admin' });
    expect(unchanged.body).toMatchObject({
      version: 1,
      capabilities: agent.capabilities,
      mcpUrl: agent.mcpUrl,
      chatUrl: agent.chatUrl,
    });
  });

  it('is for the owner and admins: 403 for others who can see it, 404 for those who cannot', async () => {
    const owner = newUserId();
    const publicAgent = await registerAgentWith({ headers: await humanHeaders(owner) });
    const privateAgent = await registerAgentWith({ headers: await humanHeaders(owner) }, { visibility: 'private' });
    const stranger = await humanHeaders(newUserId());
    expectError(
      await call('PATCH', `/agents/${publicAgent.agentId}`, { headers: stranger, body: { name: 'mine now' } }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await call('PATCH', `/agents/${publicAgent.agentId}`, { apiKey: publicAgent.apiKey, body: { name: 'self' } }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await call('PATCH', `/agents/${privateAgent.agentId}`, { headers: stranger, body: { name: 'mine now' } }),
      404,
      'AGENT_NOT_FOUND',
    );
    expectError(await call('PATCH', `/agents/${publicAgent.agentId}`, { body: { name: 'x' } }), 401, 'UNAUTHENTICATED');
    expectError(
      await call('PATCH', '/agents/00000000-0000-4000-8000-000000000000', { apiKey: 'admin', body: { name: 'x' } }),
      404,
      'AGENT_NOT_FOUND',
    );

    const byOwner = await call('PATCH', `/agents/${privateAgent.agentId}`, {
      headers: await humanHeaders(owner),
      body: { name: 'Renamed by owner' },
    });
    expect(byOwner.status).toBe(200);
    expect(byOwner.body).toMatchObject({ name: 'Renamed by owner', owner: { type: 'HUMAN', id: owner } });
  });
});

describe('DELETE /agents/{id}', () => {
  it('removes the agent and revokes its keys', async () => {
    const agent = await registerAgent();
    expect((await call('DELETE', `/agents/${agent.agentId}`, { apiKey: 'admin' })).status).toBe(204);
    expectError(await call('GET', `/agents/${agent.agentId}`, { apiKey: 'admin' }), 404, 'AGENT_NOT_FOUND');
    expectError(await call('GET', '/agents', { apiKey: agent.apiKey }), 401, 'UNAUTHENTICATED');
    expect(
      await database()
        .collection('agents')
        .findOne({ _id: agent.agentId as never }),
    ).toBeNull();
    const keys = await database().collection('api_keys').find({ subjectId: agent.agentId }).toArray();
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((key) => key.revokedAt instanceof Date)).toBe(true);
    expectError(await call('DELETE', `/agents/${agent.agentId}`, { apiKey: 'admin' }), 404, 'AGENT_NOT_FOUND');
  });

  it('is for the owner and admins only', async () => {
    const owner = newUserId();
    const agent = await registerAgentWith({ headers: await humanHeaders(owner) });
    expectError(
      await call('DELETE', `/agents/${agent.agentId}`, { headers: await humanHeaders(newUserId()) }),
      403,
      'FORBIDDEN',
    );
    expectError(await call('DELETE', `/agents/${agent.agentId}`, { apiKey: agent.apiKey }), 403, 'FORBIDDEN');
    expectError(await call('DELETE', `/agents/${agent.agentId}`), 401, 'UNAUTHENTICATED');
    expect((await call('DELETE', `/v1/agents/${agent.agentId}`, { headers: await humanHeaders(owner) })).status).toBe(
      204,
    );
  });
});

describe('POST /agents/{id}/keys/rotate', () => {
  it('issues a new key and signing secret; the old key stops working', async () => {
    const agent = await registerAgent();
    const reply = await call('POST', `/agents/${agent.agentId}/keys/rotate`, { apiKey: agent.apiKey });
    expect(reply.status).toBe(200);
    expect(reply.body.agentId).toBe(agent.agentId);
    expect(reply.body.apiKey).not.toBe(agent.apiKey);
    expect(reply.body.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(reply.body.signingSecret).not.toBe(agent.signingSecret);

    expectError(await call('GET', `/agents/${agent.agentId}`, { apiKey: agent.apiKey }), 401, 'UNAUTHENTICATED');
    expect((await call('GET', `/agents/${agent.agentId}`, { apiKey: reply.body.apiKey })).status).toBe(200);
    const stored = await database()
      .collection('agents')
      .findOne({ _id: agent.agentId as never });
    expect(openedSigningSecret(stored)).toBe(reply.body.signingSecret);
  });

  it('keeps the rotated signing secret when a change of the agent runs at the same time', async () => {
    const agent = await registerAgent();
    for (let round = 0; round < 10; round += 1) {
      const [changed, rotated] = await Promise.all([
        call('PATCH', `/agents/${agent.agentId}`, { apiKey: 'admin', body: { description: `round ${round}` } }),
        call('POST', `/agents/${agent.agentId}/keys/rotate`, { apiKey: 'admin' }),
      ]);
      expect({ round, changed: changed.status, rotated: rotated.status }).toEqual({
        round,
        changed: expect.any(Number),
        rotated: 200,
      });
      const stored = await database()
        .collection('agents')
        .findOne({ _id: agent.agentId as never });
      expect({ round, signingSecret: openedSigningSecret(stored) }).toEqual({
        round,
        signingSecret: rotated.body.signingSecret,
      });
    }
  });

  it('is for the agent, its owner and admins', async () => {
    const owner = newUserId();
    const agent = await registerAgentWith({ headers: await humanHeaders(owner) });
    const other = await registerAgent();
    expectError(await call('POST', `/agents/${agent.agentId}/keys/rotate`, { apiKey: other.apiKey }), 403, 'FORBIDDEN');
    expectError(
      await call('POST', `/agents/${agent.agentId}/keys/rotate`, { headers: await humanHeaders(newUserId()) }),
      403,
      'FORBIDDEN',
    );
    expectError(await call('POST', `/agents/${agent.agentId}/keys/rotate`), 401, 'UNAUTHENTICATED');
    expectError(
      await call('POST', '/agents/00000000-0000-4000-8000-000000000000/keys/rotate', { apiKey: 'admin' }),
      404,
      'AGENT_NOT_FOUND',
    );
    expect(
      (await call('POST', `/agents/${agent.agentId}/keys/rotate`, { headers: await humanHeaders(owner) })).status,
    ).toBe(200);
    expect((await call('POST', `/v1/agents/${agent.agentId}/keys/rotate`, { apiKey: 'admin' })).status).toBe(200);
  });
});
