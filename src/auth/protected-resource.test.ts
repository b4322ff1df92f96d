import { authorizationServerOf, resourceMetadata, resourcePathOf } from './protected-resource';

describe('resourcePathOf', () => {
  it('names /mcp and each /mcp/{serverId} as a resource of its own, and the rest of the API as the root', () => {
    const cases: Record<string, string> = {
      '/mcp': '/mcp',
      '/mcp/': '/mcp',
      '/mcp/server-1': '/mcp/server-1',
      '/mcp/server-1/': '/mcp/server-1',
      '/mcp/server-1/more': '/mcp/server-1',
      '/mcp/a%20b': '/mcp/a%20b',
      '/mcp/a"b': '/mcp',
      '/mcp-servers': '',
      '/mcpx': '',
      '/agents': '',
      '/v1/mcp': '',
    };
    expect(Object.fromEntries(Object.keys(cases).map((path) => [path, resourcePathOf(path)]))).toEqual(cases);
  });
});

describe('authorizationServerOf', () => {
  it('is AUTH_ISSUER when the service verifies human tokens and the issuer is a URL', () => {
    expect(authorizationServerOf({ authIssuer: 'https://idp.test', authJwksUrl: 'https://idp.test/jwks' })).toBe(
      'https://idp.test',
    );
    expect(authorizationServerOf({ authIssuer: 'https://idp.test', authJwtSecret: 'x'.repeat(32) })).toBe(
      'https://idp.test',
    );
    expect(authorizationServerOf({ authIssuer: 'https://idp.test' })).toBeUndefined();
    expect(authorizationServerOf({ authIssuer: 'not a url', authJwksUrl: 'https://idp.test/jwks' })).toBeUndefined();
    expect(authorizationServerOf({ authJwksUrl: 'https://idp.test/jwks' })).toBeUndefined();
  });
});

describe('resourceMetadata', () => {
  it('names the resource by its absolute URL, and the authorization server only when there is one', () => {
    expect(resourceMetadata('https://acs.test', '/mcp/s1', 'https://idp.test')).toEqual({
      resource: 'https://acs.test/mcp/s1',
      authorization_servers: ['https://idp.test'],
      bearer_methods_supported: ['header'],
      resource_name: 'Agent coordination service: MCP server /mcp/s1',
    });
    expect(resourceMetadata('https://acs.test', '', undefined)).toEqual({
      resource: 'https://acs.test',
      bearer_methods_supported: ['header'],
      resource_name: 'Agent coordination service',
    });
  });
});
