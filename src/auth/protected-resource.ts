import type { Context } from 'koa';
import type { Config } from '../config/config';
import { serviceOriginOf } from '../http/service-origin';

/** RFC 9728 §3.1: where a protected resource's metadata is, the resource's path appended to it. */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/**
 * A path of the MCP endpoints: `/mcp`, or a virtual server's `/mcp/{serverId}`, or below one of
 * them. The id is a segment of RFC 3986's characters, so that it never breaks a quoted header value.
 */
const MCP_RESOURCE = /^(\/mcp(?:\/[\w.~%!$&'()*+,;=:@-]+)?)(?:\/|$)/;

/**
 * The protected resource a request path belongs to, as a path: `/mcp` or `/mcp/{serverId}` for the
 * MCP endpoints, each a resource an MCP client asks a token for, and '' for the rest of the API,
 * whose resource is the service's origin itself.
 */
export function resourcePathOf(path: string): string {
  return MCP_RESOURCE.exec(path)?.[1] ?? '';
}

/** Whether `path` is one of the MCP endpoints, where one `Authorization: Bearer` is a whole credential. */
export const isMcpPath = (path: string): boolean => resourcePathOf(path) !== '';

export type ResourceMetadataSettings = Pick<Config, 'authIssuer' | 'authJwksUrl' | 'authJwtSecret'>;

/**
 * The authorization server that issues the tokens of people: AUTH_ISSUER, when the service verifies
 * human tokens at all and the issuer is a URL (RFC 8414 names an authorization server by its issuer
 * URL, from which clients find its metadata). Undefined otherwise: then only API keys get in.
 */
export function authorizationServerOf(settings: ResourceMetadataSettings): string | undefined {
  const { authIssuer, authJwksUrl, authJwtSecret } = settings;
  if (authIssuer === undefined || (authJwksUrl === undefined && authJwtSecret === undefined)) return undefined;
  return URL.canParse(authIssuer) ? authIssuer : undefined;
}

/**
 * RFC 9728 §2: the metadata of the protected resource at `resourcePath` of `origin`. Tokens go in
 * the Authorization header only; no scopes, as what a credential may do depends on its principal,
 * not on scopes granted.
 */
export function resourceMetadata(
  origin: string,
  resourcePath: string,
  authorizationServer: string | undefined,
): Record<string, unknown> {
  return {
    resource: `${origin}${resourcePath}`,
    ...(authorizationServer === undefined ? {} : { authorization_servers: [authorizationServer] }),
    bearer_methods_supported: ['header'],
    resource_name:
      resourcePath === '' ? 'Agent coordination service' : `Agent coordination service: MCP server ${resourcePath}`,
  };
}

/**
 * RFC 9728 §5.1: the challenge of a 401, naming where the metadata of the resource the request was
 * for is, so that a client with OAuth support can find the authorization server and sign a person in.
 */
export const resourceChallenge = (ctx: Context): string =>
  `Bearer resource_metadata="${serviceOriginOf(ctx)}${RESOURCE_METADATA_PATH}${resourcePathOf(ctx.path)}"`;
