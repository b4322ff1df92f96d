import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { freePort } from '../../src/util/ports';
import { agentRegistration } from '../support/agents';
import { serviceEnv } from '../support/global-setup';
import { call, expectError } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';
import { ServiceProcess } from '../support/service-process';
import { testStack } from '../support/test-stack';

/**
 * A second API process configured as in production: human tokens verified against a JWKS (served
 * here, on loopback) with issuer, and told apart by audience (the session token is for this
 * service, the identity token for the client the human signed in to), agent URLs that must be https, and no
 * CALLBACK_SIGNING_SECRET (a service whose operator set up no task callbacks).
 */
const ISSUER = 'https://idp.test';
const AUDIENCE = 'agent-coordination';
const IDENTITY_AUDIENCE = 'web-client';

let jwks: http.Server;
let service: ServiceProcess;
let baseUrl: string;
let signingKey: CryptoKey;
let strangerKey: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  signingKey = pair.privateKey;
  strangerKey = (await generateKeyPair('ES256')).privateKey;
  const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'test-key', alg: 'ES256', use: 'sig' };
  jwks = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', () => resolve()));

  const stack = testStack();
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  service = ServiceProcess.spawn(
    'server.ts',
    serviceEnv(stack, {
      PORT: String(port),
      AUTH_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`,
      AUTH_JWT_SECRET: '',
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: AUDIENCE,
      AUTH_IDENTITY_AUDIENCE: IDENTITY_AUDIENCE,
      ALLOW_INSECURE_AGENT_URLS: 'false',
      CALLBACK_SIGNING_SECRET: '',
    }),
    path.join(stack.runDir, `production-settings-${port}.log`),
  );
  await service.waitReady(baseUrl);
});

afterAll(async () => {
  await service?.stop();
  await new Promise((resolve) => jwks?.close(resolve));
});

interface TokenOptions {
  key?: CryptoKey;
  issuer?: string;
  /** Both tokens' audience, instead of each its own. */
  audience?: string | string[];
  kid?: string;
}

/** No `typ`: told apart by audience, the tokens' `typ` is not looked at. */
const es256Token = (subject: string, audience: string | string[], options: TokenOptions = {}) =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: options.kid ?? 'test-key' })
    .setSubject(subject)
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? audience)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(options.key ?? signingKey);

async function headersFor(subject: string, options: TokenOptions = {}): Promise<Record<string, string>> {
  return {
    authorization: `Bearer ${await es256Token(subject, AUDIENCE, options)}`,
    'x-identity-token': await es256Token(subject, IDENTITY_AUDIENCE, options),
  };
}

const httpsAgent = (overrides: Record<string, unknown> = {}) =>
  agentRegistration({
    mcpUrl: 'https://agent.example.com/mcp',
    chatUrl: 'https://agent.example.com/chat',
    ...overrides,
  });

describe('human tokens verified against a JWKS', () => {
  it('accepts tokens signed by a key of the JWKS with the right issuer and audience', async () => {
    const user = newUserId();
    const reply = await call('POST', '/agents', { baseUrl, headers: await headersFor(user), body: httpsAgent() });
    expect(reply.status).toBe(201);
    expect(reply.body.owner).toEqual({ type: 'HUMAN', id: user });
  });

  // Options as functions: the stranger's key only exists once beforeAll ran.
  it.each([
    ['a key not in the JWKS', (): TokenOptions => ({ key: strangerKey })],
    ['an unknown kid', (): TokenOptions => ({ kid: 'other-key' })],
    ['another issuer', (): TokenOptions => ({ issuer: 'https://evil.test' })],
    ['another audience', (): TokenOptions => ({ audience: 'someone-else' })],
    ['the session audience on both', (): TokenOptions => ({ audience: AUDIENCE })],
    ['the identity audience on both', (): TokenOptions => ({ audience: IDENTITY_AUDIENCE })],
    ['both audiences on both', (): TokenOptions => ({ audience: [AUDIENCE, IDENTITY_AUDIENCE] })],
  ])('answers 401 to tokens with %s', async (_what, options) => {
    expectError(
      await call('GET', '/agents', { baseUrl, headers: await headersFor('u1', options()) }),
      401,
      'UNAUTHENTICATED',
    );
  });

  it('answers 401 to the identity token presented as both, and to the two swapped', async () => {
    const [session, identity] = await Promise.all([es256Token('u1', AUDIENCE), es256Token('u1', IDENTITY_AUDIENCE)]);
    for (const headers of [
      { authorization: `Bearer ${identity}`, 'x-identity-token': identity },
      { authorization: `Bearer ${identity}`, 'x-identity-token': session },
    ]) {
      expectError(await call('GET', '/agents', { baseUrl, headers }), 401, 'UNAUTHENTICATED');
    }
  });

  it('answers 401 to HS256 tokens: no shared secret is configured', async () => {
    expectError(await call('GET', '/agents', { baseUrl, headers: await humanHeaders('u1') }), 401, 'UNAUTHENTICATED');
  });
});

describe('the identity provider for MCP clients', () => {
  it('names AUTH_ISSUER as the authorization server of the API and of each MCP endpoint', async () => {
    for (const resourcePath of ['', '/mcp', '/mcp/some-server']) {
      const reply = await call('GET', `/.well-known/oauth-protected-resource${resourcePath}`, { baseUrl });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ resource: `${baseUrl}${resourcePath}`, authorization_servers: [ISSUER] });
    }
  });

  it("leads the MCP SDK's client from a 401 to the identity provider", async () => {
    for (const resourcePath of ['/mcp', '/mcp/some-server']) {
      const refused = await fetch(`${baseUrl}${resourcePath}`, {
        method: 'POST',
        headers: { authorization: 'Bearer not-a-key', 'content-type': 'application/json' },
        body: '{}',
      });
      const { resourceMetadataUrl } = extractWWWAuthenticateParams(refused);
      expect(resourceMetadataUrl?.href).toBe(`${baseUrl}/.well-known/oauth-protected-resource${resourcePath}`);
      for (const opts of [{ resourceMetadataUrl }, {}]) {
        const metadata = await discoverOAuthProtectedResourceMetadata(`${baseUrl}${resourcePath}`, opts);
        expect(metadata).toMatchObject({ resource: `${baseUrl}${resourcePath}`, authorization_servers: [ISSUER] });
      }
    }
  });

  it('takes an access token of the JWKS alone on /mcp, and not the identity token', async () => {
    const bearer = async (audience: string) => ({ authorization: `Bearer ${await es256Token('u1', audience)}` });
    // Past authentication: whatever /mcp answers, it is not a refused credential.
    expect((await call('POST', '/mcp', { baseUrl, headers: await bearer(AUDIENCE), body: {} })).status).not.toBe(401);
    expectError(
      await call('POST', '/mcp', { baseUrl, headers: await bearer(IDENTITY_AUDIENCE), body: {} }),
      401,
      'UNAUTHENTICATED',
    );
  });
});

describe('https agent URLs (ALLOW_INSECURE_AGENT_URLS=false)', () => {
  it.each([['mcpUrl'], ['mcpEndpoint'], ['callbackUrl']])('answers 400 to an http %s', async (field) => {
    const body = httpsAgent({ [field]: 'http://agent.example.com/x' });
    if (field === 'mcpEndpoint') delete body.mcpUrl;
    const error = expectError(
      await call('POST', '/agents', { baseUrl, apiKey: 'admin', body }),
      400,
      'VALIDATION_ERROR',
    );
    expect(error.message).toMatch(/https/);
  });

  it('answers 400 to an http mcpUrl in a PATCH, and accepts https', async () => {
    const created = await call('POST', '/agents', {
      baseUrl,
      apiKey: 'admin',
      body: httpsAgent({ chatUrl: 'http://agent.example.com/chat' }),
    });
    expect(created.status).toBe(201);
    const path = `/agents/${created.body.agentId}`;
    expectError(
      await call('PATCH', path, { baseUrl, apiKey: 'admin', body: { mcpUrl: 'http://agent.example.com/mcp' } }),
      400,
      'VALIDATION_ERROR',
    );
    expect(
      (await call('PATCH', path, { baseUrl, apiKey: 'admin', body: { mcpUrl: 'https://agent.example.com/v2' } }))
        .status,
    ).toBe(200);
  });
});

describe('task callbacks without CALLBACK_SIGNING_SECRET', () => {
  it('answers 400 to a task with a callbackUrl, which could never be signed', async () => {
    const agent = await call('POST', '/agents', { baseUrl, apiKey: 'admin', body: httpsAgent() });
    const task = {
      agentId: agent.body.agentId,
      operation: 'tools/echo',
      params: { text: 'x' },
      callbackUrl: 'https://receiver.example.com/done',
    };
    const error = expectError(
      await call('POST', '/tasks', { baseUrl, apiKey: 'admin', body: task }),
      400,
      'VALIDATION_ERROR',
    );
    expect(error.message).toMatch(/CALLBACK_SIGNING_SECRET/);
    const composed = expectError(
      await call('POST', '/tasks/compose', {
        baseUrl,
        apiKey: 'admin',
        body: [{ ...task, callbackUrl: undefined }, task],
      }),
      400,
      'VALIDATION_ERROR',
    );
    expect(composed.message).toMatch(/^Task 1: callbackUrl/);
  });
});
