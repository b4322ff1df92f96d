import type Router from '@koa/router';
import type { Context } from 'koa';
import { ApiError, ErrorCode, notFound } from '../http/errors';
import { DocumentedRouter, routeTable } from '../http/route-module';
import { APP_HEADERS } from './content-security-policy';
import { readAppFiles, type AppSettings } from './app-files';

/** The web app's files: served to anyone, before authentication; the app holds no credential of its own. */
export const WEB_APP_ROUTES = routeTable({
  versioned: false,
  operations: {
    'GET /app': {
      summary:
        'The web app (docs/app.md) at /app/, which signs in with the credentials of the API; /app redirects there',
      credential: 'none',
      success: [200, 'HTML'],
    },
    'GET /app/:file': {
      summary: "One of the web app's files: app.js or app.css",
      credential: 'none',
      success: [200, 'JavaScript or CSS'],
    },
  },
});

/** GET /app/ and its files, with the app's Content-Security-Policy. */
export function createWebAppRoutes(settings: AppSettings, files = readAppFiles(settings)): Router {
  const router = new DocumentedRouter(WEB_APP_ROUTES);
  const send = (ctx: Context, name: string) => {
    if (!files)
      throw new ApiError(ErrorCode.NOT_FOUND, 'The web app is not built: run `npm run build:app` (npm ci runs it)');
    const file = files.get(name);
    if (!file) throw notFound('App file');
    ctx.set(APP_HEADERS);
    ctx.type = file.type;
    ctx.body = file.body;
  };
  // The router matches /app and /app/ alike: the page is at /app/, where a bare /app is sent.
  router.serve('GET /app', (ctx) => (ctx.path.endsWith('/') ? send(ctx, 'index.html') : ctx.redirect('/app/')));
  router.serve('GET /app/:file', (ctx) => send(ctx, ctx.params.file));
  return router.module().router;
}
