import type { Context, Next } from 'koa';
import { isAdmin, type AuthState } from '../auth/principal';
import { addressOf, principalKey } from '../limits/limit-keys';
import type { Limits } from '../limits/limits';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Koa middleware after authentication: a principal's writes count against it, a request without a
 * credential against its address. The admin is the operator and is not limited.
 */
export function limitRequests(limits: Pick<Limits, 'writesPerPrincipal' | 'anonymousPerAddress'>) {
  return async function limitRequest(ctx: Context, next: Next): Promise<void> {
    const principal = (ctx.state as AuthState).principal;
    if (!principal) await limits.anonymousPerAddress.consume(addressOf(ctx.req.socket));
    else if (!isAdmin(principal) && !READ_METHODS.has(ctx.method))
      await limits.writesPerPrincipal.consume(principalKey(principal));
    await next();
  };
}
