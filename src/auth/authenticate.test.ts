import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pino from 'pino';
import { SignJWT } from 'jose';
import { errorHandler } from '../http/error-handler';
import { createMetrics } from '../ops/metrics';
import type { ApiKeyStore } from './api-keys';
import { Authenticator } from './authenticate';
import { HumanTokenVerifier } from './human-tokens';
import { isMcpPath } from './protected-resource';
import { ADMIN_PRINCIPAL, PrincipalKind, type AuthState } from './principal';

const SECRET = 'a-development-secret-of-32-characters!';
const ADMIN_KEY = 'the-admin-key';
const SERVICE_KEY = `acs_${'k'.repeat(16)}_${'s'.repeat(43)}`;

/** The keys' store as far as authentication reads it: the admin key and one service key. */
const apiKeys = {
  resolve: async (presented: string) =>
    ({ [ADMIN_KEY]: ADMIN_PRINCIPAL, [SERVICE_KEY]: { kind: PrincipalKind.SERVICE, id: 'k'.repeat(16) } })[presented],
} as unknown as ApiKeyStore;

const token = (subject: string, typ: string | undefined, secret = SECRET) =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', ...(typ === undefined ? {} : { typ }) })
    .setSubject(subject)
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(secret));

/** An app whose every path answers the principal the middleware resolved; the MCP paths take a single bearer. */
async function principalFor(path: string, headers: Record<string, string>): Promise<[number, unknown]> {
  const authenticator = new Authenticator(apiKeys, new HumanTokenVerifier({ authJwtSecret: SECRET }));
  const app = new Koa();
  app.silent = true;
  app.use(errorHandler(pino({ level: 'silent' }), createMetrics().unavailable));
  app.use(authenticator.middleware(() => '127.0.0.1', { singleBearer: isMcpPath }));
  app.use((ctx) => {
    ctx.body = { principal: (ctx.state as AuthState).principal ?? null };
  });
  const handle = app.callback();
  const server = http.createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, { headers });
    const body = (await response.json()) as { principal?: unknown; error?: { code: string } };
    return [response.status, 'principal' in body ? body.principal : body.error?.code];
  } finally {
    server.close();
  }
}

const bearer = (value: string) => ({ authorization: `Bearer ${value}` });
const human = { kind: 'human', id: 'user-1' };

describe('Authenticator: a single Authorization: Bearer on the paths that take one', () => {
  it('resolves an API key, the admin key among them, as that key', async () => {
    expect(await principalFor('/mcp', bearer(SERVICE_KEY))).toEqual([200, { kind: 'service', id: 'k'.repeat(16) }]);
    expect(await principalFor('/mcp/server-1', bearer(ADMIN_KEY))).toEqual([200, ADMIN_PRINCIPAL]);
    expect(await principalFor('/mcp', bearer(`acs_${'x'.repeat(16)}_${'y'.repeat(43)}`))).toEqual([
      401,
      'UNAUTHENTICATED',
    ]);
  });

  it("resolves a person's access token alone as that person, verified as the session token is", async () => {
    expect(await principalFor('/mcp', bearer(await token('user-1', 'at+jwt')))).toEqual([200, human]);
    const refused = [
      await token('user-1', undefined), // an identity token, not an access token
      await token('user-1', 'at+jwt', 'another-secret-of-32-characters-long!'),
    ];
    for (const jwt of refused) expect(await principalFor('/mcp', bearer(jwt))).toEqual([401, 'UNAUTHENTICATED']);
    expect(await principalFor('/mcp', { authorization: `Basic ${SERVICE_KEY}` })).toEqual([401, 'UNAUTHENTICATED']);
  });

  it('still takes both human tokens there, and X-Api-Key', async () => {
    const both = { ...bearer(await token('user-1', 'at+jwt')), 'x-identity-token': await token('user-1', undefined) };
    expect(await principalFor('/mcp', both)).toEqual([200, human]);
    expect(await principalFor('/mcp', { 'x-api-key': ADMIN_KEY })).toEqual([200, ADMIN_PRINCIPAL]);
  });

  it('leaves the other paths as they are: an access token needs its identity token, a key comes as X-Api-Key', async () => {
    expect(await principalFor('/agents', bearer(await token('user-1', 'at+jwt')))).toEqual([401, 'UNAUTHENTICATED']);
    expect(await principalFor('/agents', bearer(SERVICE_KEY))).toEqual([401, 'UNAUTHENTICATED']);
    expect(await principalFor('/mcpx', bearer(SERVICE_KEY))).toEqual([401, 'UNAUTHENTICATED']);
    expect(await principalFor('/agents', {})).toEqual([200, null]);
  });
});
