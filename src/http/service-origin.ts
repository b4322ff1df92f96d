import type { Context } from 'koa';

/**
 * The service's origin as the caller reached it: what its Agent Cards name as its URL, and what an
 * agent's endpoint may not lead back to. Behind a trusted proxy, the host it forwarded. Koa 3's
 * `ctx.origin` is the request's Origin header, not this.
 */
export const serviceOriginOf = (ctx: Context): string => `${ctx.protocol}://${ctx.host}`;
