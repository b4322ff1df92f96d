import { createHash } from 'node:crypto';
import type { Context } from 'koa';

/** How long a client or cache may keep an Agent Card before it asks again (A2A 1.0 §8.6): an agent's changes reach its readers within this. */
export const CARD_MAX_AGE_SECONDS = 300;

/**
 * Answers `ctx` with `card`, for clients and caches to keep: the one exception to ANSWER_HEADERS'
 * `no-store`, as a card holds no secret. Any cache may keep a public card; a private agent's card
 * (`shared: false`) only the reader's own, as others may not see it. The ETag is a digest of the
 * card: it changes with the agent, and with the service's way of writing cards. A request whose
 * `If-None-Match` names it gets 304 with no body.
 */
export function answerWithCard(ctx: Context, card: Record<string, unknown>, { shared }: { shared: boolean }): void {
  const etag = `"${createHash('sha256').update(JSON.stringify(card)).digest('base64url')}"`;
  ctx.set('Cache-Control', `${shared ? 'public' : 'private'}, max-age=${CARD_MAX_AGE_SECONDS}`);
  ctx.set('ETag', etag);
  if (namesTag(ctx.get('if-none-match'), etag)) ctx.status = 304;
  else ctx.body = card;
}

/**
 * Whether an If-None-Match names `etag` (weakly, as RFC 9110 §13.1.2 compares). Not Koa's
 * `ctx.fresh`: it ignores a request with `Cache-Control: no-cache`, which fetch() adds to every
 * conditional request, while that directive is for caches on the way, not for the origin's answer.
 */
function namesTag(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
