import type { Context } from 'koa';
import { ApiError, ErrorCode } from '../http/errors';

export const PrincipalKind = {
  ADMIN: 'admin',
  SERVICE: 'service',
  AGENT: 'agent',
  HUMAN: 'human',
} as const;
export type PrincipalKind = (typeof PrincipalKind)[keyof typeof PrincipalKind];

/** Who is calling: every request with a valid credential resolves to exactly one principal. */
export interface Principal {
  kind: PrincipalKind;
  /** admin: "admin"; service: the key id; agent: the agentId; human: the identity token's `sub` (the access token's, when it comes alone). */
  id: string;
  /** service: the key whose limits this one shares, when another service key minted it (docs/security.md). */
  tenantId?: string;
}

export const ADMIN_PRINCIPAL: Principal = { kind: PrincipalKind.ADMIN, id: 'admin' };

export interface AuthState {
  principal?: Principal;
}

/** The caller's principal, or 401 when the request carried no credential. */
export function requirePrincipal(ctx: Context): Principal {
  const principal = (ctx.state as AuthState).principal;
  if (!principal)
    throw new ApiError(
      ErrorCode.UNAUTHENTICATED,
      'A credential is required: X-Api-Key, or Authorization with X-Identity-Token',
    );
  return principal;
}

/** The caller's principal when it is one of `kinds`, else 403 (401 without credential). */
export function requireKind(ctx: Context, ...kinds: PrincipalKind[]): Principal {
  const principal = requirePrincipal(ctx);
  if (!kinds.includes(principal.kind)) {
    throw new ApiError(ErrorCode.FORBIDDEN, `This route is for ${kinds.join(' or ')} credentials`);
  }
  return principal;
}

export const isAdmin = (principal: Principal | undefined): boolean => principal?.kind === PrincipalKind.ADMIN;

/** Whether two principals are one: kind and id both, since ids of different kinds may coincide (a human's `sub` may be any string). */
export const samePrincipal = (a: Principal, b: Principal): boolean => a.kind === b.kind && a.id === b.id;

/** A principal as answers show it: `{type, id}`, the kind in capitals like a participant's type. */
export const principalRef = (principal: Principal): { type: Uppercase<PrincipalKind>; id: string } => ({
  type: principal.kind.toUpperCase() as Uppercase<PrincipalKind>,
  id: principal.id,
});
