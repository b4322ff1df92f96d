import { SignJWT } from 'jose';
import { registerAgent, registerAgentWith } from '../support/agents';
import { call, expectError } from '../support/http';
import { hs256Token, humanHeaders, humanTokens, newUserId } from '../support/humans';
import { useTestDatabase } from '../support/database';
import { testStack } from '../support/test-stack';

const database = useTestDatabase();
// acs_<16-character id>_<43-character secret>; both parts may contain "_" themselves.
const keyIdOf = (key: string) => key.slice('acs_'.length, 'acs_'.length + 16);
const secretPartOf = (key: string) => key.slice('acs_'.length + 17);
const storedKey = (id: string) =>
  database()
    .collection('api_keys')
    .findOne({ _id: id as never });

describe('service keys: POST /keys and DELETE /keys/{id}', () => {
  it('creates a service key shown once, stored only as a hash', async () => {
    const reply = await call('POST', '/keys', { apiKey: 'admin', body: { description: 'billing' } });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ kind: 'service', description: 'billing' });
    expect(reply.body.apiKey).toMatch(/^acs_[A-Za-z0-9_-]{16}_[A-Za-z0-9_-]{43}$/);
    expect(reply.body.key).toBe(reply.body.apiKey);
    expect(keyIdOf(reply.body.key)).toBe(reply.body.id);
    const stored = await storedKey(reply.body.id);
    expect(stored).toMatchObject({
      kind: 'service',
      subjectId: reply.body.id,
      createdBy: { kind: 'admin', id: 'admin' },
    });
    expect(JSON.stringify(stored)).not.toContain(secretPartOf(reply.body.key));
  });

  it('lets a service key register agents it then owns', async () => {
    const { body: service } = await call('POST', '/v1/keys', { apiKey: 'admin' });
    const agent = await registerAgent({}, service.key);
    expect(agent.owner).toEqual({ type: 'SERVICE', id: service.id });
    expect(
      (await call('PATCH', `/agents/${agent.agentId}`, { apiKey: service.key, body: { name: 'by its service' } }))
        .status,
    ).toBe(200);
  });

  it('revokes: the key stops working at once; a second revoke is 404', async () => {
    const { body: service } = await call('POST', '/keys', { apiKey: 'admin' });
    expect((await call('GET', '/agents', { apiKey: service.key })).status).toBe(200);
    expect((await call('DELETE', `/keys/${service.id}`, { apiKey: 'admin' })).status).toBe(204);
    expectError(await call('GET', '/agents', { apiKey: service.key }), 401, 'UNAUTHENTICATED');
    expect((await storedKey(service.id))!.revokedAt).toBeInstanceOf(Date);
    expectError(await call('DELETE', `/keys/${service.id}`, { apiKey: 'admin' }), 404, 'NOT_FOUND');
    expectError(await call('DELETE', '/keys/no-such-key', { apiKey: 'admin' }), 404, 'NOT_FOUND');
  });

  it('lets a service create keys and revoke those it created, not others', async () => {
    const { body: service } = await call('POST', '/keys', { apiKey: 'admin' });
    const { body: child } = await call('POST', '/keys', { apiKey: service.key });
    const { body: unrelated } = await call('POST', '/keys', { apiKey: 'admin' });
    expect((await storedKey(child.id))!.createdBy).toEqual({ kind: 'service', id: service.id });
    expectError(await call('DELETE', `/keys/${unrelated.id}`, { apiKey: service.key }), 403, 'FORBIDDEN');
    expect((await call('DELETE', `/keys/${child.id}`, { apiKey: service.key })).status).toBe(204);
  });

  it('is refused to agents and humans (403), without credential (401), and with a bad body (400)', async () => {
    const agent = await registerAgent();
    expectError(await call('POST', '/keys', { apiKey: agent.apiKey }), 403, 'FORBIDDEN');
    expectError(await call('POST', '/keys', { headers: await humanHeaders(newUserId()) }), 403, 'FORBIDDEN');
    expectError(await call('DELETE', `/keys/${keyIdOf(agent.apiKey)}`, { apiKey: agent.apiKey }), 403, 'FORBIDDEN');
    expectError(await call('POST', '/keys'), 401, 'UNAUTHENTICATED');
    expectError(await call('POST', '/keys', { apiKey: 'admin', body: { description: 5 } }), 400, 'VALIDATION_ERROR');
    const unknown = expectError(
      await call('POST', '/keys', { apiKey: 'admin', body: { kind: 'admin' } }),
      400,
      'VALIDATION_ERROR',
    );
    expect(JSON.stringify(unknown)).toContain('kind');
    expectError(
      await call('POST', '/keys', { apiKey: 'admin', body: { description: 'x'.repeat(201) } }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('answers 401 to malformed and near-miss keys', async () => {
    const agent = await registerAgent();
    const flipped = agent.apiKey.slice(0, -1) + (agent.apiKey.endsWith('A') ? 'B' : 'A');
    for (const key of [flipped, 'acs_', 'x'.repeat(10_000), `${testStack().adminKey}x`]) {
      expectError(await call('GET', '/agents', { apiKey: key }), 401, 'UNAUTHENTICATED');
    }
  });
});

describe('human credentials (HS256)', () => {
  it('registers an agent owned by the human', async () => {
    const user = newUserId();
    const agent = await registerAgentWith({ headers: await humanHeaders(user) });
    expect(agent.owner).toEqual({ type: 'HUMAN', id: user });
    expect(agent.apiKey).toMatch(/^acs_/);
  });

  it.each(['at+jwt', 'application/at+jwt', 'AT+JWT', 'Application/AT+JWT'])(
    'takes a session token of typ %s',
    async (typ) => {
      const { identity } = await humanTokens('u1');
      const session = await hs256Token('u1', 'session', { typ });
      expect(
        (
          await call('GET', '/agents?limit=1', {
            headers: { authorization: `Bearer ${session}`, 'x-identity-token': identity },
          })
        ).status,
      ).toBe(200);
    },
  );

  it('accepts the session token with or without "Bearer "', async () => {
    const user = newUserId();
    const headers = await humanHeaders(user);
    expect(
      (
        await call('GET', '/agents?limit=1', {
          headers: { ...headers, authorization: headers.authorization.replace(/^Bearer /, '') },
        })
      ).status,
    ).toBe(200);
  });

  it.each([
    ['only the session token', async () => ({ authorization: `Bearer ${await hs256Token('u1', 'session')}` })],
    ['only the identity token', async () => ({ 'x-identity-token': await hs256Token('u1', 'identity') })],
    ['tokens with different subjects', () => humanHeaders('u1', { sessionSubject: 'u2' })],
    [
      'tokens signed with another secret',
      () => humanHeaders('u1', { secret: 'another-secret-of-at-least-32-characters!!' }),
    ],
    ['expired tokens', () => humanHeaders('u1', { expiresIn: '-1m' })],
    ['tokens without exp', () => humanHeaders('u1', { expiresIn: null })],
    [
      'a session token without exp',
      async () => ({
        authorization: `Bearer ${await hs256Token('u1', 'session', { expiresIn: null })}`,
        'x-identity-token': await hs256Token('u1', 'identity'),
      }),
    ],
    [
      'an identity token without exp',
      async () => ({
        authorization: `Bearer ${await hs256Token('u1', 'session')}`,
        'x-identity-token': await hs256Token('u1', 'identity', { expiresIn: null }),
      }),
    ],
    // Two different tokens, so that only their kind is wrong.
    [
      'an identity token as the session token',
      async () => ({
        authorization: `Bearer ${await hs256Token('u1', 'identity', { expiresIn: '9m' })}`,
        'x-identity-token': await hs256Token('u1', 'identity'),
      }),
    ],
    ['a session token of another typ', () => humanHeaders('u1', { typ: 'JWT' })],
    [
      'an access token (at+jwt) as the identity token',
      async () => ({
        authorization: `Bearer ${await hs256Token('u1', 'session')}`,
        'x-identity-token': await hs256Token('u1', 'session', { expiresIn: '9m' }),
      }),
    ],
    [
      'the same token twice',
      async () => {
        const { identity } = await humanTokens('u1');
        return { authorization: `Bearer ${identity}`, 'x-identity-token': identity };
      },
    ],
    ['garbage', async () => ({ authorization: 'Bearer not.a.jwt', 'x-identity-token': 'not.a.jwt' })],
    [
      'an unsigned token (alg none)',
      async () => {
        const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"u1"}').toString('base64url')}.`;
        return { authorization: `Bearer ${none}`, 'x-identity-token': none };
      },
    ],
    [
      'tokens without sub',
      async () => {
        const token = await new SignJWT({})
          .setProtectedHeader({ alg: 'HS256' })
          .setExpirationTime('5m')
          .sign(new TextEncoder().encode(testStack().jwtSecret));
        return { authorization: `Bearer ${token}`, 'x-identity-token': token };
      },
    ],
  ])('answers 401 to %s', async (_what, headers) => {
    expectError(await call('POST', '/agents', { headers: await headers(), body: {} }), 401, 'UNAUTHENTICATED');
  });
});
