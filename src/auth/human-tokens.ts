import {
  createRemoteJWKSet,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  type ProtectedHeaderParameters,
} from 'jose';
import type { Config } from '../config/config';
import { PrincipalKind, type Principal } from './principal';

type Key = Uint8Array | JWTVerifyGetKey;

/** What makes a verified JWT the session token, or the identity token. */
interface TokenRule {
  options: JWTVerifyOptions;
  fits(header: ProtectedHeaderParameters, payload: JWTPayload): boolean;
}

/** RFC 9068: an access token JWT's `typ` is `at+jwt`, which may be written `application/at+jwt`, in any case. */
export function isAccessTokenType(typ: unknown): boolean {
  return typeof typ === 'string' && ['at+jwt', 'application/at+jwt'].includes(typ.toLowerCase());
}

function carriesAudience(payload: JWTPayload, audience: string): boolean {
  return payload.aud === audience || (Array.isArray(payload.aud) && payload.aud.includes(audience));
}

export type HumanTokenSettings = Pick<
  Config,
  'authJwksUrl' | 'authJwtSecret' | 'authIssuer' | 'authAudience' | 'authIdentityAudience'
>;

/**
 * Verifies the two JWTs a human presents (session and identity token) against the identity
 * provider's JWKS, or a shared HS256 secret in development. Both must be valid, carry an `exp` not
 * yet past, and name the same `sub`, and each must be of its own kind, so that an identity token
 * (often handed to other parties) never stands in for the session token: by default the session
 * token is an RFC 9068 access token (`typ: at+jwt`) and the identity token is not; with
 * AUTH_IDENTITY_AUDIENCE set, each carries its own audience and not the other's.
 */
export class HumanTokenVerifier {
  private readonly key?: Key;
  private readonly session: TokenRule;
  private readonly identity: TokenRule;

  constructor(config: HumanTokenSettings) {
    if (config.authJwksUrl) this.key = createRemoteJWKSet(new URL(config.authJwksUrl));
    else if (config.authJwtSecret) this.key = new TextEncoder().encode(config.authJwtSecret);
    const options: JWTVerifyOptions = {
      // jose checks exp only when present; a token without one would be good forever if it leaked.
      requiredClaims: ['exp'],
      ...(config.authIssuer ? { issuer: config.authIssuer } : {}),
      ...(config.authJwksUrl ? {} : { algorithms: ['HS256'] }),
    };
    const { authAudience, authIdentityAudience } = config;
    if (authIdentityAudience && authAudience) {
      this.session = {
        options: { ...options, audience: authAudience },
        fits: (_header, payload) => !carriesAudience(payload, authIdentityAudience),
      };
      this.identity = {
        options: { ...options, audience: authIdentityAudience },
        fits: (_header, payload) => !carriesAudience(payload, authAudience),
      };
    } else {
      const withAudience = { ...options, ...(authAudience ? { audience: authAudience } : {}) };
      this.session = { options: withAudience, fits: (header) => isAccessTokenType(header.typ) };
      this.identity = { options: withAudience, fits: (header) => !isAccessTokenType(header.typ) };
    }
  }

  /** The human principal, or undefined when either token is invalid or not of its kind, or they disagree. */
  async verify(sessionToken: string, identityToken: string): Promise<Principal | undefined> {
    if (!this.key || sessionToken === identityToken) return undefined;
    const [session, identity] = await Promise.all([
      this.subjectOf(sessionToken, this.session),
      this.subjectOf(identityToken, this.identity),
    ]);
    if (!identity || session !== identity) return undefined;
    return { kind: PrincipalKind.HUMAN, id: identity };
  }

  /**
   * The human whose access token `token` is, alone: verified as the session token is, for the
   * routes that take one bearer credential. Undefined when it is invalid or not of that kind.
   */
  async verifyAccessToken(token: string): Promise<Principal | undefined> {
    if (!this.key) return undefined;
    const subject = await this.subjectOf(token, this.session);
    return subject === undefined ? undefined : { kind: PrincipalKind.HUMAN, id: subject };
  }

  private async subjectOf(token: string, rule: TokenRule): Promise<string | undefined> {
    try {
      const { protectedHeader, payload } = await jwtVerify(token, this.key as never, rule.options);
      if (!rule.fits(protectedHeader, payload)) return undefined;
      return typeof payload.sub === 'string' && payload.sub.length > 0 ? payload.sub : undefined;
    } catch {
      return undefined;
    }
  }
}
