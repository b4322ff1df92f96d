import type { Context } from 'koa';

/** Aborts when the client goes away, so a request that waits stops waiting for nobody. */
export function abandonedSignal(ctx: Context): AbortSignal {
  const abandoned = new AbortController();
  ctx.res.once('close', () => abandoned.abort());
  return abandoned.signal;
}
