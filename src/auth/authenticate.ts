import type { Context, Next } from 'koa';
import { ApiError, ErrorCode } from '../http/errors';
import type { RateLimit } from '../limits/rate-limit';
import type { ClientAddress } from '../limits/limit-keys';
import type { ApiKeyStore } from './api-keys';
import type { HumanTokenVerifier } from './human-tokens';
import type { AuthState, Principal } from './principal';

/** The credentials a caller can present, however they arrived (HTTP headers or WebSocket query). */
export interface PresentedCredentials {
  apiKey?: string;
  sessionToken?: string;
  identityToken?: string;
  /**
   * The session token may come alone, as the one bearer credential MCP clients send: an API key, or
   * a person's access token (see verifyBearer).
   */
  singleBearer?: boolean;
}

export interface AuthenticationOptions {
  /** The paths where `Authorization: Bearer` alone is a whole credential (the MCP endpoints); none by default. */
  singleBearer?: (path: string) => boolean;
}

const BEARER = /^Bearer\s+/i;
const BEARER_TOKEN = /^Bearer\s+(\S+)\s*$/i;
/** A JWS in compact form: three base64url parts, dot-separated. No API key has a dot. */
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/;

export class Authenticator {
  constructor(
    private readonly apiKeys: ApiKeyStore,
    private readonly humans: HumanTokenVerifier,
    /** Rejected credentials per address: one over it, and the address's credentials are refused unchecked for a while. */
    private readonly failures?: RateLimit,
  ) {}

  /**
   * undefined when nothing was presented; the principal when a credential is valid;
   * 401 when something was presented and it is not valid; 429 when `address` presented too many
   * invalid ones lately (counted per address, since a guesser has no principal to count against).
   */
  async resolve(credentials: PresentedCredentials, address: string): Promise<Principal | undefined> {
    if (!credentials.apiKey && !credentials.sessionToken && !credentials.identityToken) return undefined;
    await this.failures?.check(address);
    try {
      return await this.verify(credentials);
    } catch (error) {
      if (error instanceof ApiError && error.code === ErrorCode.UNAUTHENTICATED) await this.failures?.record(address);
      throw error;
    }
  }

  private async verify(credentials: PresentedCredentials): Promise<Principal | undefined> {
    const { apiKey, sessionToken, identityToken } = credentials;
    if (apiKey) return (await this.apiKeys.resolve(apiKey)) ?? unauthenticated('Invalid API key');
    if (credentials.singleBearer && sessionToken && !identityToken) return this.verifyBearer(sessionToken);
    if (sessionToken || identityToken) {
      if (!sessionToken || !identityToken) {
        return unauthenticated('Human credentials need both Authorization (session token) and X-Identity-Token');
      }
      return (
        (await this.humans.verify(sessionToken.replace(BEARER, ''), identityToken)) ??
        unauthenticated('Invalid session or identity token')
      );
    }
    return undefined;
  }

  /**
   * One `Authorization: Bearer <token>`: a JWT is a person's access token, verified as the session
   * token is (issuer, audience, key, `typ`), and stands for that person without an identity token;
   * any other token is an API key (`acs_…`, or the admin key).
   */
  private async verifyBearer(authorization: string): Promise<Principal> {
    const token = BEARER_TOKEN.exec(authorization)?.[1];
    if (token === undefined) return unauthenticated('Authorization must be Bearer <API key or access token>');
    if (!JWT_SHAPE.test(token)) return (await this.apiKeys.resolve(token)) ?? unauthenticated('Invalid API key');
    return (await this.humans.verifyAccessToken(token)) ?? unauthenticated('Invalid access token');
  }

  /**
   * Koa middleware: sets `ctx.state.principal` from the request headers when a credential is
   * presented; on the paths `options.singleBearer` names, `Authorization: Bearer` alone is one.
   */
  middleware(clientAddress: ClientAddress, options: AuthenticationOptions = {}) {
    return async (ctx: Context, next: Next): Promise<void> => {
      (ctx.state as AuthState).principal = await this.resolve(
        {
          apiKey: ctx.get('x-api-key') || undefined,
          sessionToken: ctx.get('authorization') || undefined,
          identityToken: ctx.get('x-identity-token') || undefined,
          singleBearer: options.singleBearer?.(ctx.path) ?? false,
        },
        clientAddress(ctx.req),
      );
      await next();
    };
  }
}

function unauthenticated(message: string): never {
  throw new ApiError(ErrorCode.UNAUTHENTICATED, message);
}
