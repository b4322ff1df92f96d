import type { Context } from 'koa';
import { answerCacheable } from '../http/cacheable-answer';
import { notFound } from '../http/errors';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { serviceOriginOf } from '../http/service-origin';
import {
  authorizationServerOf,
  RESOURCE_METADATA_PATH,
  resourceMetadata,
  resourcePathOf,
  type ResourceMetadataSettings,
} from './protected-resource';

/** How long a client or cache may keep the metadata: it changes only with the service's configuration. */
export const RESOURCE_METADATA_MAX_AGE_SECONDS = 3600;

const ANSWER =
  'RFC 9728 protected resource metadata, cacheable (ETag, Cache-Control); 304 for a matching If-None-Match';

export const RESOURCE_METADATA_ROUTES = routeTable({
  versioned: false,
  operations: {
    'GET /.well-known/oauth-protected-resource': {
      summary: "The API's OAuth 2.0 protected resource metadata: the identity provider for people's tokens",
      credential: 'none',
      success: [200, ANSWER],
    },
    'GET /.well-known/oauth-protected-resource/mcp': {
      summary: 'The protected resource metadata of the MCP server at /mcp',
      credential: 'none',
      success: [200, ANSWER],
    },
    'GET /.well-known/oauth-protected-resource/mcp/:serverId': {
      summary: 'The protected resource metadata of the virtual MCP server at /mcp/{serverId}',
      credential: 'none',
      success: [200, ANSWER],
      errors: { '404': 'NOT_FOUND: a serverId that is not a path segment of RFC 3986 characters' },
    },
  },
});

/**
 * The protected resource metadata (RFC 9728) of the API and of each MCP endpoint, which MCP
 * clients read to find where a person signs in: the same for anyone, so any cache may keep it.
 * A virtual server's is answered whether or not the server exists, as the metadata tells nothing
 * of it and a client reads it before it may see the server.
 */
export function createResourceMetadataRoutes(settings: ResourceMetadataSettings): RouteModule {
  const router = new DocumentedRouter(RESOURCE_METADATA_ROUTES);
  const answer = (ctx: Context) => {
    const resourcePath = ctx.path.slice(RESOURCE_METADATA_PATH.length);
    // A suffix no MCP endpoint has (`/mcp/`, a serverId with a quote) names no resource.
    if (resourcePathOf(resourcePath) !== resourcePath) throw notFound('Protected resource');
    const document = resourceMetadata(serviceOriginOf(ctx), resourcePath, authorizationServerOf(settings));
    answerCacheable(ctx, document, { shared: true, maxAgeSeconds: RESOURCE_METADATA_MAX_AGE_SECONDS });
  };
  router.serve('GET /.well-known/oauth-protected-resource', answer);
  router.serve('GET /.well-known/oauth-protected-resource/mcp', answer);
  router.serve('GET /.well-known/oauth-protected-resource/mcp/:serverId', answer);
  return router.module();
}
