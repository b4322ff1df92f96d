import { forbidden } from '../http/errors';

/** Hosts of a page served by this machine: a local app, where a DNS rebinding page's Origin names the attacker's host. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Which web origins may call /mcp from a browser: loopback ones, PUBLIC_URL's, and those of
 * MCP_ALLOWED_ORIGINS. A request without Origin (any client that is not a browser) passes.
 */
export function allowedOrigins(configured: readonly string[], publicUrl?: string): (origin: string) => boolean {
  // Built at the first request that carries an Origin: most clients are not browsers.
  let allowed: Set<string> | undefined;
  return (origin) => {
    allowed ??= new Set([...configured, ...(publicUrl ? [new URL(publicUrl).origin] : [])]);
    if (allowed.has(origin)) return true;
    try {
      const { protocol, hostname } = new URL(origin);
      return (protocol === 'http:' || protocol === 'https:') && LOOPBACK_HOSTS.has(hostname);
    } catch {
      return false;
    }
  };
}

/**
 * Refuses (403) a request whose Origin may not call /mcp, as MCP's transport requires against DNS
 * rebinding: a page of another site that reaches the service under a name resolving to it.
 */
export function checkOrigin(origin: string | undefined, mayCall: (origin: string) => boolean): void {
  if (origin !== undefined && origin !== '' && !mayCall(origin))
    throw forbidden(`Origin ${origin} may not call /mcp: add it to MCP_ALLOWED_ORIGINS`);
}
