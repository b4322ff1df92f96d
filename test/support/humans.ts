import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { testStack } from './test-stack';

/** Which of a human's two tokens: the session token is an RFC 9068 access token (`typ: at+jwt`), the identity token is not. */
export type HumanTokenKind = 'session' | 'identity';

export interface HumanTokenOptions {
  /** HS256 secret; the test stack's AUTH_JWT_SECRET unless given. */
  secret?: string;
  /** The session token's `sub`, when a test wants it to differ from the identity token's. */
  sessionSubject?: string;
  /** As jose takes it ('10m' unless given); null signs a token without `exp`. */
  expiresIn?: string | null;
  /** The JOSE `typ` header: `at+jwt` for a session token unless given, none for an identity token; null: none. */
  typ?: string | null;
}

/** A session or identity token as the identity provider would sign it (HS256). */
export function hs256Token(subject: string, kind: HumanTokenKind, options: HumanTokenOptions = {}): Promise<string> {
  const typ = options.typ === undefined ? (kind === 'session' ? 'at+jwt' : undefined) : (options.typ ?? undefined);
  const token = new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', ...(typ === undefined ? {} : { typ }) })
    .setSubject(subject)
    .setIssuedAt();
  if (options.expiresIn !== null) token.setExpirationTime(options.expiresIn ?? '10m');
  return token.sign(new TextEncoder().encode(options.secret ?? testStack().jwtSecret));
}

/** A human's two tokens, both naming `subject` (the session token `sessionSubject` when given). */
export async function humanTokens(
  subject: string,
  options: HumanTokenOptions = {},
): Promise<Record<HumanTokenKind, string>> {
  const [session, identity] = await Promise.all([
    hs256Token(options.sessionSubject ?? subject, 'session', options),
    hs256Token(subject, 'identity', options),
  ]);
  return { session, identity };
}

/** The headers a human sends: Authorization (session token) and X-Identity-Token, both naming `subject`. */
export async function humanHeaders(subject: string, options: HumanTokenOptions = {}): Promise<Record<string, string>> {
  const { session, identity } = await humanTokens(subject, options);
  return { authorization: `Bearer ${session}`, 'x-identity-token': identity };
}

/** A fresh user id, so that tests sharing the service never see each other's private agents. */
export const newUserId = (): string => `user-${randomUUID()}`;
