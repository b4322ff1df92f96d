import { randomBytes, randomUUID } from 'node:crypto';
import { typedPrincipals } from '../../src/migrations/typed-principals';
import { Store } from '../../src/store/mongo';
import { agentRegistration, allPages, registerAgent, registerAgentWith, type RegisteredAgent } from '../support/agents';
import { openedSigningSecret, stackAgents, useTestDatabase } from '../support/database';
import { call, expectError } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';
import { createRoom } from '../support/room-client';
import { testStack } from '../support/test-stack';

// A human's `sub` is whatever the identity provider says; it must never pass for a key's or an agent's id.

const database = useTestDatabase();

async function serviceKey(): Promise<{ id: string; key: string }> {
  const reply = await call('POST', '/keys', { apiKey: 'admin', body: { description: 'typed principals test' } });
  expect(reply.status).toBe(201);
  return reply.body;
}

describe('a human whose sub equals a service key id', () => {
  let service: { id: string; key: string };
  let agent: RegisteredAgent;
  let impostor: Record<string, string>;

  beforeAll(async () => {
    service = await serviceKey();
    agent = await registerAgent({ visibility: 'private' }, service.key);
    impostor = await humanHeaders(service.id);
  });

  it("neither sees nor changes the service's private agent", async () => {
    expectError(await call('GET', `/agents/${agent.agentId}`, { headers: impostor }), 404, 'AGENT_NOT_FOUND');
    expectError(
      await call('PATCH', `/agents/${agent.agentId}`, { headers: impostor, body: { name: 'taken over' } }),
      404,
      'AGENT_NOT_FOUND',
    );
    expectError(
      await call('POST', `/agents/${agent.agentId}/keys/rotate`, { headers: impostor }),
      404,
      'AGENT_NOT_FOUND',
    );
    expectError(await call('DELETE', `/agents/${agent.agentId}`, { headers: impostor }), 404, 'AGENT_NOT_FOUND');
    expect(await allPages('/agents', { headers: impostor }, 200)).not.toContain(agent.agentId);
    // The agent is untouched and its key still works.
    const byService = await call('GET', `/agents/${agent.agentId}`, { apiKey: service.key });
    expect(byService.body).toMatchObject({ name: agent.name, version: 1, owner: { type: 'SERVICE', id: service.id } });
    expect((await call('GET', `/agents/${agent.agentId}`, { apiKey: agent.apiKey })).status).toBe(200);
  });

  it('does not own what it registers as the service does', async () => {
    const own = await registerAgentWith({ headers: impostor }, { visibility: 'private' });
    expect(own.owner).toEqual({ type: 'HUMAN', id: service.id });
    expectError(await call('GET', `/agents/${own.agentId}`, { apiKey: service.key }), 404, 'AGENT_NOT_FOUND');
  });
});

describe('sharing with a bare id', () => {
  it('shares with the agent of that id, not with a human whose sub equals it', async () => {
    const friend = await registerAgent();
    const secret = await registerAgent({ visibility: 'private', sharedWith: [friend.agentId] });
    expect(secret.sharedWith).toEqual([{ type: 'AGENT', id: friend.agentId }]);
    expect((await call('GET', `/agents/${secret.agentId}`, { apiKey: friend.apiKey })).status).toBe(200);
    expectError(
      await call('GET', `/agents/${secret.agentId}`, { headers: await humanHeaders(friend.agentId) }),
      404,
      'AGENT_NOT_FOUND',
    );
    expect(await allPages('/agents', { headers: await humanHeaders(friend.agentId) }, 200)).not.toContain(
      secret.agentId,
    );
    expect(await allPages('/agents', { apiKey: friend.apiKey }, 200)).toContain(secret.agentId);
  });

  it('shares with a human when no agent has that id, and a typed entry says which', async () => {
    const user = newUserId();
    const lookalike = randomUUID();
    const secret = await registerAgent({
      visibility: 'private',
      sharedWith: [user, { type: 'HUMAN', id: lookalike }, { type: 'HUMAN', id: lookalike }],
    });
    expect(secret.sharedWith).toEqual([
      { type: 'HUMAN', id: user },
      { type: 'HUMAN', id: lookalike },
    ]);
    expect((await call('GET', `/agents/${secret.agentId}`, { headers: await humanHeaders(user) })).status).toBe(200);
    expect((await call('GET', `/agents/${secret.agentId}`, { headers: await humanHeaders(lookalike) })).status).toBe(
      200,
    );
  });

  it('keeps a typed HUMAN entry from reaching the agent of that id, on PATCH too', async () => {
    const agent = await registerAgent();
    const secret = await registerAgent({ visibility: 'private' });
    const patched = await call('PATCH', `/agents/${secret.agentId}`, {
      apiKey: 'admin',
      body: { sharedWith: [{ type: 'HUMAN', id: agent.agentId }] },
    });
    expect(patched.body.sharedWith).toEqual([{ type: 'HUMAN', id: agent.agentId }]);
    expectError(await call('GET', `/agents/${secret.agentId}`, { apiKey: agent.apiKey }), 404, 'AGENT_NOT_FOUND');
    expect(
      (await call('GET', `/agents/${secret.agentId}`, { headers: await humanHeaders(agent.agentId) })).status,
    ).toBe(200);
  });

  it.each([
    ['an unknown type', { type: 'SERVICE', id: 'x' }],
    ['no id', { type: 'HUMAN' }],
    ['an extra member', { type: 'HUMAN', id: 'x', role: 'admin' }],
  ])('answers 400 to an entry with %s', async (_what, entry) => {
    const error = expectError(
      await call('POST', '/agents', { apiKey: 'admin', body: agentRegistration({ sharedWith: [entry] }) }),
      400,
      'VALIDATION_ERROR',
    );
    expect((error.details as Array<{ path: string }>).map((problem) => problem.path)).toContain('/sharedWith/0');
  });
});

describe('rooms', () => {
  it("refuse to list an agent the room's creator may not see, as if it did not exist", async () => {
    const service = await serviceKey();
    const hidden = await registerAgent({ visibility: 'private' });
    const room = await createRoom({}, service.key);
    const unknown = expectError(
      await call('POST', `/rooms/${room.roomId}/participants`, {
        apiKey: service.key,
        body: { type: 'AGENT', participantId: randomUUID() },
      }),
      404,
      'AGENT_NOT_FOUND',
    );
    const added = await call('POST', `/rooms/${room.roomId}/participants`, {
      apiKey: service.key,
      body: { type: 'AGENT', participantId: hidden.agentId },
    });
    expect(expectError(added, 404, 'AGENT_NOT_FOUND').message).toBe(
      unknown.message.replace(/[0-9a-f-]{36}/, hidden.agentId),
    );
    const created = await call('POST', '/rooms', {
      apiKey: service.key,
      body: { name: 'with a hidden agent', participants: [{ type: 'AGENT', participantId: hidden.agentId }] },
    });
    expectError(created, 404, 'AGENT_NOT_FOUND');
    const own = await registerAgent({ visibility: 'private' }, service.key);
    expect(
      (
        await call('POST', `/rooms/${room.roomId}/participants`, {
          apiKey: service.key,
          body: { type: 'AGENT', participantId: own.agentId },
        })
      ).status,
    ).toBe(201);
  });

  it('remove the member of the type asked for when a human and an agent share an id', async () => {
    const agent = await registerAgent();
    const both = [
      { type: 'AGENT', participantId: agent.agentId },
      { type: 'HUMAN', participantId: agent.agentId },
    ];
    const room = await createRoom({ participants: both });
    const ambiguous = await call('DELETE', `/rooms/${room.roomId}/participants/${agent.agentId}`, { apiKey: 'admin' });
    expectError(ambiguous, 400, 'VALIDATION_ERROR');
    const removed = await call('DELETE', `/rooms/${room.roomId}/participants/${agent.agentId}?type=HUMAN`, {
      apiKey: 'admin',
    });
    expect(removed.status).toBe(200);
    expect(removed.body.participants).toEqual([both[0]]);
    expectError(
      await call('DELETE', `/rooms/${room.roomId}/participants/${agent.agentId}?type=HUMAN`, { apiKey: 'admin' }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await call('DELETE', `/rooms/${room.roomId}/participants/${agent.agentId}?type=ROBOT`, { apiKey: 'admin' }),
      400,
      'VALIDATION_ERROR',
    );
  });
});

/** Agents as older versions stored them, copied from `friend`: bare ids, and the signing secret in plaintext. */
async function legacyAgents(friend: RegisteredAgent, user: string, owners: string[]) {
  const db = database();
  const template = await db.collection('agents').findOne({ _id: friend.agentId as never });
  const agents = owners.map((ownerId) => ({
    ...template,
    _id: randomUUID(),
    visibility: 'private',
    ownerId,
    sharedWith: [friend.agentId, user],
    signingSecret: `whsec_${randomBytes(32).toString('base64')}`,
  }));
  await db.collection('agents').insertMany(agents as never[]);
  return agents;
}

describe('the typed-principals migration', () => {
  it('types the owners, shares and key creators that older versions stored as bare ids, once', async () => {
    const db = database();
    const service = await serviceKey();
    const friend = await registerAgent();
    const user = newUserId();
    const [byService, byHuman] = (await legacyAgents(friend, user, [service.id, user])).map((agent) => agent._id);
    await db.collection('api_keys').updateOne({ _id: service.id as never }, { $set: { createdBy: 'admin' } });

    const store = await Store.connect(testStack().mongoUri, testStack().mongoDatabase);
    try {
      expect(await typedPrincipals.run(store)).toBeGreaterThanOrEqual(3);
      expect(await typedPrincipals.run(store)).toBe(0);
    } finally {
      await store.close();
    }

    const stored = await db.collection('agents').findOne({ _id: byService as never });
    expect(stored).not.toHaveProperty('ownerId');
    expect(stored).toMatchObject({
      owner: { kind: 'service', id: service.id },
      sharedWith: [
        { type: 'AGENT', id: friend.agentId },
        { type: 'HUMAN', id: user },
      ],
    });
    expect((await db.collection('agents').findOne({ _id: byHuman as never }))?.owner).toEqual({
      kind: 'human',
      id: user,
    });
    expect((await db.collection('api_keys').findOne({ _id: service.id as never }))?.createdBy).toEqual({
      kind: 'admin',
      id: 'admin',
    });
    // And the access rules read the typed form: the service manages its agent, a human named like it does not.
    expect(
      (await call('PATCH', `/agents/${byService}`, { apiKey: service.key, body: { name: 'migrated' } })).status,
    ).toBe(200);
    expectError(
      await call('GET', `/agents/${byService}`, { headers: await humanHeaders(service.id) }),
      404,
      'AGENT_NOT_FOUND',
    );
    expect((await call('GET', `/agents/${byService}`, { apiKey: friend.apiKey })).status).toBe(200);
    expect(await allPages('/agents', { apiKey: friend.apiKey }, 200)).toContain(byService);
    expect((await call('GET', `/agents/${byHuman}`, { headers: await humanHeaders(user) })).status).toBe(200);
  });

  it("keeps its typing when another process seals the same agents' secrets meanwhile", async () => {
    const db = database();
    const service = await serviceKey();
    const friend = await registerAgent();
    const user = newUserId();
    const agents = await legacyAgents(friend, user, Array<string>(24).fill(service.id));
    // Two connections, as two processes starting at once: one migrates, the other seals.
    const [migrating, sealing] = await Promise.all(
      [0, 1].map(() => Store.connect(testStack().mongoUri, testStack().mongoDatabase)),
    );
    const [, secrets] = await Promise.all([
      typedPrincipals.run(migrating),
      stackAgents(sealing).sealStoredSecrets(),
    ]).finally(() => Promise.all([migrating.close(), sealing.close()]));
    let leftPlain = 0;
    for (const agent of agents) {
      const stored = await db.collection('agents').findOne({ _id: agent._id as never });
      expect({ id: agent._id, ownerId: stored?.ownerId, owner: stored?.owner }).toEqual({
        id: agent._id,
        ownerId: undefined,
        owner: { kind: 'service', id: service.id },
      });
      // Sealed, or left for the next start because the migration held the agent: never lost.
      if (stored?.signingSecret === agent.signingSecret) leftPlain += 1;
      else expect(openedSigningSecret(stored)).toBe(agent.signingSecret);
    }
    expect(leftPlain).toBeLessThanOrEqual(secrets.leftBusy);
  });
});
