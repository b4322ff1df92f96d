import { randomBytes } from 'node:crypto';
import { allPages, registerAgent, registerAgentWith, type RegisteredAgent } from '../support/agents';
import { call, expectError, type Reply } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';

/** A made-up word no other test uses, so that searches find only this test's agents. */
const nonce = () => `zq${randomBytes(5).toString('hex')}`;
const ids = (reply: Reply) => (reply.body as Array<{ agentId: string }>).map((agent) => agent.agentId);
const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: 'object' } });

describe('GET /agents', () => {
  it('pages with limit and after, in agentId order, every agent once', async () => {
    const owner = newUserId();
    const headers = await humanHeaders(owner);
    const mine = await Promise.all(
      [1, 2, 3, 4, 5].map(() => registerAgentWith({ headers }, { visibility: 'private' })),
    );
    const listed = await allPages('/agents', { headers }, 2);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual(listed);
    expect(listed).toEqual(expect.arrayContaining(mine.map((agent) => agent.agentId)));
  });

  it('answers with records without secrets, 50 by default', async () => {
    await Promise.all(Array.from({ length: 3 }, () => registerAgent()));
    const reply = await call('GET', '/v1/agents', { apiKey: 'admin' });
    expect(reply.status).toBe(200);
    expect(Array.isArray(reply.body)).toBe(true);
    expect(reply.body.length).toBeGreaterThan(0);
    expect(reply.body.length).toBeLessThanOrEqual(50);
    for (const agent of reply.body) {
      expect(agent).toMatchObject({ agentId: agent.id, status: 'active' });
      expect(agent).not.toHaveProperty('apiKey');
      expect(agent).not.toHaveProperty('signingSecret');
    }
  });

  it.each([['0'], ['201'], ['-1'], ['ten'], ['1.5'], ['']])('answers 400 to limit=%s', async (limit) => {
    expectError(await call('GET', `/agents?limit=${limit}`, { apiKey: 'admin' }), 400, 'VALIDATION_ERROR');
  });

  it('answers 400 to a malformed after, a repeated limit, and 401 without a credential', async () => {
    expectError(await call('GET', '/agents?after=not-an-id', { apiKey: 'admin' }), 400, 'VALIDATION_ERROR');
    expectError(await call('GET', '/agents?limit=1&limit=2', { apiKey: 'admin' }), 400, 'VALIDATION_ERROR');
    expectError(await call('GET', '/agents'), 401, 'UNAUTHENTICATED');
    expect((await call('GET', '/agents?limit=200', { apiKey: 'admin' })).status).toBe(200);
  });
});

describe('GET /agents/search', () => {
  it('ranks name matches above tool matches above description matches', async () => {
    const word = nonce();
    const inDescription = await registerAgent({ name: 'Plain', description: `Knows about ${word} things` });
    const inToolDescription = await registerAgent({
      name: 'Plainer',
      capabilities: { tools: [tool('other', `helps with ${word}`)] },
    });
    const inToolName = await registerAgent({
      name: 'Plainest',
      capabilities: { tools: [tool(`${word}_lookup`, 'finds')] },
    });
    const inName = await registerAgent({ name: `The ${word} agent` });
    await registerAgent({ name: 'Unrelated' });

    const reply = await call('GET', `/agents/search?query=${word}`, { apiKey: 'admin' });
    expect(reply.status).toBe(200);
    expect(ids(reply)).toEqual([inName, inToolName, inDescription, inToolDescription].map((agent) => agent.agentId));
  });

  it('scores every word of the query, case-insensitively', async () => {
    const [first, second] = [nonce(), nonce()];
    const both = await registerAgent({ name: `${first.toUpperCase()} agent`, description: `also ${second}` });
    const one = await registerAgent({ name: `${first} agent` });
    const reply = await call('GET', `/v1/agents/search?query=${encodeURIComponent(`${first}, ${second}!`)}`, {
      apiKey: 'admin',
    });
    expect(ids(reply)).toEqual([both.agentId, one.agentId]);
  });

  it('filters by capability=tools/<name>, with or without a query', async () => {
    const word = nonce();
    const toolName = `${word}_translate`;
    const withTool = await registerAgent({
      name: `${word} translator`,
      capabilities: { tools: [tool(toolName, 'translates')] },
    });
    await registerAgent({ name: `${word} speller` });

    expect(
      ids(await call('GET', `/agents/search?query=${word}&capability=tools/${toolName}`, { apiKey: 'admin' })),
    ).toEqual([withTool.agentId]);
    expect(ids(await call('GET', `/agents/search?capability=tools/${toolName}`, { apiKey: 'admin' }))).toEqual([
      withTool.agentId,
    ]);
    expect(ids(await call('GET', `/agents/search?query=${word}`, { apiKey: 'admin' }))).toHaveLength(2);
  });

  it('pages ranked results with limit and after', async () => {
    const word = nonce();
    const agents = await Promise.all([1, 2, 3].map((n) => registerAgent({ name: `${word} ${'x'.repeat(n)}` })));
    const all = ids(await call('GET', `/agents/search?query=${word}`, { apiKey: 'admin' }));
    expect([...all].sort()).toEqual(agents.map((agent) => agent.agentId).sort());
    expect(await allPages(`/agents/search?query=${word}`, { apiKey: 'admin' }, 2)).toEqual(all);
  });

  it('ends the paging when after is not among the matches', async () => {
    const word = nonce();
    await registerAgent({ name: word });
    const unrelated = await registerAgent({ name: 'Unrelated' });
    expect(
      (await call('GET', `/agents/search?query=${word}&after=${unrelated.agentId}`, { apiKey: 'admin' })).body,
    ).toEqual([]);
  });

  it('answers [] when nothing matches or the query has no word', async () => {
    expect((await call('GET', `/agents/search?query=${nonce()}`, { apiKey: 'admin' })).body).toEqual([]);
    expect(
      (await call('GET', `/agents/search?query=${encodeURIComponent('!!! ???')}`, { apiKey: 'admin' })).body,
    ).toEqual([]);
  });

  it.each([
    ['no query nor capability', ''],
    ['an empty query', '?query='],
    ['an unknown capability category', '?capability=skills/x'],
    ['a capability without a method', '?capability=tools/'],
    ['a query of 1001 characters', `?query=${'a'.repeat(1001)}`],
    ['a bad limit', '?query=a&limit=500'],
  ])('answers 400 to %s', async (_what, queryString) => {
    expectError(await call('GET', `/agents/search${queryString}`, { apiKey: 'admin' }), 400, 'VALIDATION_ERROR');
  });

  it('answers 401 without a credential', async () => {
    expectError(await call('GET', '/agents/search?query=a'), 401, 'UNAUTHENTICATED');
  });
});

describe('private agents', () => {
  let word: string;
  let owner: string;
  let friend: string;
  let friendAgent: RegisteredAgent;
  let secret: RegisteredAgent;
  let serviceKey: string;

  beforeAll(async () => {
    word = nonce();
    [owner, friend] = [newUserId(), newUserId()];
    friendAgent = await registerAgent();
    secret = await registerAgentWith(
      { headers: await humanHeaders(owner) },
      { name: `${word} secret`, visibility: 'private', sharedWith: [friend, friendAgent.agentId] },
    );
    serviceKey = (await call('POST', '/keys', { apiKey: 'admin', body: { description: 'discovery test' } })).body.key;
  });

  const seenBy = async (credentials: { apiKey?: string; headers?: Record<string, string> }) => ({
    lookup: (await call('GET', `/agents/${secret.agentId}`, credentials)).status,
    search: ids(await call('GET', `/agents/search?query=${word}`, credentials)).includes(secret.agentId),
    list: (await allPages('/agents', credentials, 200)).includes(secret.agentId),
  });
  const visible = { lookup: 200, search: true, list: true };
  const invisible = { lookup: 404, search: false, list: false };

  it('are visible to their owner, those shared with, admins and the agent itself', async () => {
    expect(await seenBy({ headers: await humanHeaders(owner) })).toEqual(visible);
    expect(await seenBy({ headers: await humanHeaders(friend) })).toEqual(visible);
    expect(await seenBy({ apiKey: friendAgent.apiKey })).toEqual(visible);
    expect(await seenBy({ apiKey: 'admin' })).toEqual(visible);
    expect(await seenBy({ apiKey: secret.apiKey })).toEqual(visible);
  });

  it('are invisible to everyone else, with 404 AGENT_NOT_FOUND on lookup', async () => {
    expect(await seenBy({ headers: await humanHeaders(newUserId()) })).toEqual(invisible);
    expect(await seenBy({ apiKey: serviceKey })).toEqual(invisible);
    expect(await seenBy({ apiKey: (await registerAgent()).apiKey })).toEqual(invisible);
    // A human whose id happens to be the agent's id is not the agent.
    expect(await seenBy({ headers: await humanHeaders(secret.agentId) })).toEqual(invisible);
    expectError(await call('GET', `/agents/${secret.agentId}`, { apiKey: serviceKey }), 404, 'AGENT_NOT_FOUND');
  });

  it('show owner and sharedWith to managers only', async () => {
    const byOwner = await call('GET', `/agents/${secret.agentId}`, { headers: await humanHeaders(owner) });
    expect(byOwner.body).toMatchObject({
      owner: { type: 'HUMAN', id: owner },
      sharedWith: [
        { type: 'HUMAN', id: friend },
        { type: 'AGENT', id: friendAgent.agentId },
      ],
      visibility: 'private',
    });
    const byFriend = await call('GET', `/agents/${secret.agentId}`, { headers: await humanHeaders(friend) });
    expect(byFriend.body).not.toHaveProperty('sharedWith');
    expect(byFriend.body).not.toHaveProperty('owner');
  });

  it('become public when the owner says so', async () => {
    const agent = await registerAgentWith({ headers: await humanHeaders(owner) }, { visibility: 'private' });
    const stranger = await humanHeaders(newUserId());
    expectError(await call('GET', `/agents/${agent.agentId}`, { headers: stranger }), 404, 'AGENT_NOT_FOUND');
    expect(
      (
        await call('PATCH', `/agents/${agent.agentId}`, {
          headers: await humanHeaders(owner),
          body: { visibility: 'public' },
        })
      ).status,
    ).toBe(200);
    expect((await call('GET', `/agents/${agent.agentId}`, { headers: stranger })).status).toBe(200);
  });
});
