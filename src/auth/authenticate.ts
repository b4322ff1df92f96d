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
}

const BEARER = /^Bearer\s+/i;

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

  /** Koa middleware: sets `ctx.state.principal` from the request headers when a credential is presented. */
  middleware(clientAddress: ClientAddress) {
    return async (ctx: Context, next: Next): Promise<void> => {
      (ctx.state as AuthState).principal = await this.resolve(
        {
          apiKey: ctx.get('x-api-key') || undefined,
          sessionToken: ctx.get('authorization') || undefined,
          identityToken: ctx.get('x-identity-token') || undefined,
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
