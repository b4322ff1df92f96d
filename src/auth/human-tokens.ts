import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import type { Config } from '../config/config';
import { PrincipalKind, type Principal } from './principal';

type Key = Uint8Array | JWTVerifyGetKey;

/**
 * Verifies the two JWTs a human presents (session and identity token) against the identity
 * provider's JWKS, or a shared HS256 secret in development. Both must be valid, carry an `exp` not
 * yet past, and name the same `sub`.
 */
export class HumanTokenVerifier {
  private readonly key?: Key;
  private readonly options: JWTVerifyOptions;

  constructor(config: Pick<Config, 'authJwksUrl' | 'authJwtSecret' | 'authIssuer' | 'authAudience'>) {
    if (config.authJwksUrl) this.key = createRemoteJWKSet(new URL(config.authJwksUrl));
    else if (config.authJwtSecret) this.key = new TextEncoder().encode(config.authJwtSecret);
    this.options = {
      // jose checks exp only when present; a token without one would be good forever if it leaked.
      requiredClaims: ['exp'],
      ...(config.authIssuer ? { issuer: config.authIssuer } : {}),
      ...(config.authAudience ? { audience: config.authAudience } : {}),
      ...(config.authJwksUrl ? {} : { algorithms: ['HS256'] }),
    };
  }

  /** The human principal, or undefined when either token is invalid or they disagree. */
  async verify(sessionToken: string, identityToken: string): Promise<Principal | undefined> {
    if (!this.key) return undefined;
    const [session, identity] = await Promise.all([this.subjectOf(sessionToken), this.subjectOf(identityToken)]);
    if (!identity || session !== identity) return undefined;
    return { kind: PrincipalKind.HUMAN, id: identity };
  }

  private async subjectOf(token: string): Promise<string | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key as never, this.options);
      return typeof payload.sub === 'string' && payload.sub.length > 0 ? payload.sub : undefined;
    } catch {
      return undefined;
    }
  }
}
