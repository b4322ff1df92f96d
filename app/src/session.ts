/**
 * The signed-in credentials, kept only in the tab's sessionStorage: gone when the tab closes or on
 * sign out, never in a URL, a cookie or localStorage.
 */
export type Credentials = { apiKey: string } | { sessionToken: string; identityToken: string };

const KEY = 'acs.credentials';

export function currentCredentials(): Credentials | undefined {
  const stored = sessionStorage.getItem(KEY);
  return stored === null ? undefined : (JSON.parse(stored) as Credentials);
}

export function signIn(credentials: Credentials): void {
  sessionStorage.setItem(KEY, JSON.stringify(credentials));
}

export function signOut(): void {
  sessionStorage.removeItem(KEY);
}

/** The API's credential headers. */
export function credentialHeaders(credentials: Credentials): Record<string, string> {
  return 'apiKey' in credentials
    ? { 'X-Api-Key': credentials.apiKey }
    : { Authorization: `Bearer ${credentials.sessionToken}`, 'X-Identity-Token': credentials.identityToken };
}

/** The room socket's credentials as WebSocket subprotocols (docs/rooms.md): a browser can send no header. */
export function socketProtocols(credentials: Credentials): string[] {
  const entries: Array<[string, string]> =
    'apiKey' in credentials
      ? [['api-key', credentials.apiKey]]
      : [
          ['authorization', credentials.sessionToken],
          ['identity-token', credentials.identityToken],
        ];
  return ['acs.credentials', ...entries.map(([name, value]) => `acs.${name}.${base64url(value)}`)];
}

function base64url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
