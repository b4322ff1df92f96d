import type { Context, Next } from 'koa';
import { ApiError, ErrorCode } from '../http/errors';
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
  ) {}

  /**
   * undefined when nothing was presented; the principal when a credential is valid;
   * 401 when something was presented and it is not valid.
   */
  async resolve(credentials: PresentedCredentials): Promise<Principal | undefined> {
    const { apiKey, sessionToken, identityToken } = credentials;
    if (apiKey) return (await this.apiKeys.resolve(apiKey)) ?? unauthenticated('Invalid API key');
    if (sessionToken || identityToken) {
      if (!sessionToken || !identityToken) {
        return unauthenticated('Human credentials need both Authorization (session token) and X-Identity-Token');
      }
      return (await this.humans.verify(sessionToken.replace(BEARER, ''), identityToken)) ?? unauthenticated('Invalid session or identity token');
    }
    return undefined;
  }

  /** Koa middleware: sets `ctx.state.principal` from the request headers when a credential is presented. */
  middleware() {
    return async (ctx: Context, next: Next): Promise<void> => {
      (ctx.state as AuthState).principal = await this.resolve({
        apiKey: ctx.get('x-api-key') || undefined,
        sessionToken: ctx.get('authorization') || undefined,
        identityToken: ctx.get('x-identity-token') || undefined,
      });
      return next();
    };
  }
}

function unauthenticated(message: string): never {
  throw new ApiError(ErrorCode.UNAUTHENTICATED, message);
}
