import type { Schema } from 'ajv';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { forbidden, notFound } from '../http/errors';
import { validator } from '../http/validate';
import type { ApiKeyStore } from './api-keys';
import { PrincipalKind, requireKind, samePrincipal } from './principal';

/** POST /keys: an optional note saying what the key is for; an unknown member is refused, as in every request. */
const KEY_CREATION_SCHEMA: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { description: { type: 'string', maxLength: 200 } },
};

const checkKeyCreation = validator<{ description?: string }>(KEY_CREATION_SCHEMA, 'key request');

export const KEY_ROUTES = routeTable({
  versioned: true,
  operations: {
    'POST /keys': {
      summary: 'Create a service API key (shown once, as apiKey and its alias key)',
      credential: 'adminOrService',
      body: KEY_CREATION_SCHEMA,
      success: [201, 'The key'],
    },
    'DELETE /keys/:keyId': { summary: 'Revoke an API key', credential: 'adminOrService', success: [204, 'Revoked'] },
  },
});

/**
 * Service keys: created by an admin or a service (docs/api.md, "Credentials and roles"), shown
 * once. An admin may revoke any key; a service the keys it created and its own.
 */
export function createKeyRoutes(apiKeys: ApiKeyStore): RouteModule {
  const router = new DocumentedRouter(KEY_ROUTES);

  router.serve('POST /keys', async (ctx) => {
    const principal = requireKind(ctx, PrincipalKind.ADMIN, PrincipalKind.SERVICE);
    const { description } = checkKeyCreation(ctx.request.body ?? {});
    const issued = await apiKeys.issue(PrincipalKind.SERVICE, undefined, description, principal);
    ctx.status = 201;
    ctx.set('Location', `/keys/${issued.id}`);
    // `apiKey`, as POST /agents names a key; `key` is the same value, for clients written against the first name.
    ctx.body = {
      id: issued.id,
      apiKey: issued.key,
      key: issued.key,
      kind: PrincipalKind.SERVICE,
      description: description ?? null,
      createdAt: issued.createdAt.toISOString(),
    };
  });

  router.serve('DELETE /keys/:keyId', async (ctx) => {
    const principal = requireKind(ctx, PrincipalKind.ADMIN, PrincipalKind.SERVICE);
    const record = await apiKeys.find(ctx.params.keyId);
    if (!record || record.revokedAt) throw notFound(`Key ${ctx.params.keyId}`);
    const createdIt = record.createdBy !== undefined && samePrincipal(record.createdBy, principal);
    const mayRevoke = principal.kind === PrincipalKind.ADMIN || createdIt || record._id === principal.id;
    if (!mayRevoke) throw forbidden('A service may revoke only the keys it created and its own');
    await apiKeys.revoke(record._id);
    ctx.status = 204;
  });

  return router.module();
}
