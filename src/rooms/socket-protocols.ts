import type { IncomingMessage } from 'node:http';
import type { PresentedCredentials } from '../auth/authenticate';
import { ApiError, ErrorCode } from '../http/errors';

/**
 * Credentials in `Sec-WebSocket-Protocol`, for browsers: their WebSocket can set no other header,
 * and a query string ends up in logs and history. A client offers the marker `acs.credentials` and
 * one protocol per credential, `acs.<name>.<value as unpadded base64url>` (names: `api-key`,
 * `authorization`, `identity-token`); the service answers with the marker alone, so no credential
 * comes back in the answer.
 */
export const CREDENTIALS_PROTOCOL = 'acs.credentials';

const CREDENTIAL_PROTOCOL = /^acs\.(api-key|authorization|identity-token)\.([A-Za-z0-9_-]+)$/;

/**
 * The credentials offered as protocols; empty when there are none. Offered without the marker,
 * they are refused (400): the answer would have no protocol to name but a credential, and a client
 * that offered protocols fails a handshake whose answer names none.
 */
export function protocolCredentials(request: IncomingMessage): PresentedCredentials {
  const offered = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((name) => name.trim());
  const found: Record<string, string> = {};
  for (const protocol of offered) {
    const match = CREDENTIAL_PROTOCOL.exec(protocol);
    if (match) found[match[1]] = Buffer.from(match[2], 'base64url').toString('utf8');
  }
  if (Object.keys(found).length > 0 && !offered.includes(CREDENTIALS_PROTOCOL)) {
    throw new ApiError(
      ErrorCode.VALIDATION_ERROR,
      `Credentials offered as subprotocols need the protocol ${CREDENTIALS_PROTOCOL} beside them, which the answer names`,
    );
  }
  return { apiKey: found['api-key'], sessionToken: found.authorization, identityToken: found['identity-token'] };
}

/** The protocol the handshake's answer names: the marker when offered, else the first that carries no credential. */
export function chosenProtocol(offered: Set<string>): string | false {
  if (offered.has(CREDENTIALS_PROTOCOL)) return CREDENTIALS_PROTOCOL;
  return [...offered].find((protocol) => !CREDENTIAL_PROTOCOL.test(protocol)) ?? false;
}
