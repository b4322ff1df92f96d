import type { Context, Next } from 'koa';
import { isA2aRead } from '../a2a/read-methods';
import { isAdmin, type AuthState } from '../auth/principal';
import { principalKey } from '../limits/limit-keys';
import type { Limits } from '../limits/limits';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Koa middleware after authentication: a principal's reads and writes count against two budgets of
 * its tenant (a service key minted by another counts with its creator), a request without a
 * credential against its address. An A2A call that only reads is a read. A request counts once when
 * it arrives, so an event stream that stays open is one read. The admin is the operator and is not limited.
 */
export function limitRequests(
  limits: Pick<Limits, 'writesPerPrincipal' | 'readsPerPrincipal' | 'anonymousPerAddress' | 'clientAddress'>,
) {
  return async function limitRequest(ctx: Context, next: Next): Promise<void> {
    const principal = (ctx.state as AuthState).principal;
    if (!principal) await limits.anonymousPerAddress.consume(limits.clientAddress(ctx.req));
    else if (!isAdmin(principal))
      await (isRead(ctx) ? limits.readsPerPrincipal : limits.writesPerPrincipal).consume(principalKey(principal));
    await next();
  };
}

const isRead = (ctx: Context): boolean =>
  READ_METHODS.has(ctx.method) || isA2aRead({ method: ctx.method, path: ctx.path, body: ctx.request.body });
