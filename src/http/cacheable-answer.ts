import { createHash } from 'node:crypto';
import type { Context } from 'koa';

export interface Cacheability {
  /** Any cache may keep it (`public`), or only the reader's own (`private`), as others may not see it. */
  shared: boolean;
  /** How long a client or cache may keep it before it asks again. */
  maxAgeSeconds: number;
}

/**
 * Answers `ctx` with `document`, for clients and caches to keep: the exception to ANSWER_HEADERS'
 * `no-store` for documents that hold no secret (Agent Cards, protected resource metadata). The
 * ETag is a digest of the document: it changes with what the document says. A request whose
 * `If-None-Match` names it gets 304 with no body.
 */
export function answerCacheable(
  ctx: Context,
  document: Record<string, unknown>,
  { shared, maxAgeSeconds }: Cacheability,
): void {
  const etag = `"${createHash('sha256').update(JSON.stringify(document)).digest('base64url')}"`;
  ctx.set('Cache-Control', `${shared ? 'public' : 'private'}, max-age=${maxAgeSeconds}`);
  ctx.set('ETag', etag);
  if (namesTag(ctx.get('if-none-match'), etag)) ctx.status = 304;
  else ctx.body = document;
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
