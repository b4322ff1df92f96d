import os from 'node:os';
import ipaddr from 'ipaddr.js';

/** Where this process serves its API: known once it listens (PORT 0 picks the port then). */
export interface OwnAddress {
  /** HOST as configured. */
  host: string;
  /** The port it listens on; undefined before it does. */
  port(): number | undefined;
}

/** The paths of this service that take requests an agent call would make: its A2A endpoints and any MCP one. */
const OWN_AGENT_PATHS = /^\/+(a2a|mcp)(\/|$)/;

/**
 * Whether `url` leads back to this service's own agent endpoints, so that an agent registered at it
 * would call the service itself, each task starting another (docs/security.md, "Loops"). Two ways:
 * any path at a loopback or unspecified address, one of this host's own addresses or the configured
 * HOST, on the port the API listens on (nothing but the API listens there); and the A2A or MCP paths
 * under `origin`, the service's URL as the caller reached it (what its Agent Cards name, its public
 * URL behind a proxy). Host names other than `localhost` are compared as spelt, not resolved: in
 * production the outbound rules refuse loopback and private addresses at every connection, and the
 * depth limit ends any loop left.
 */
export function leadsToOwnService(url: string, own: OwnAddress, origin?: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (origin !== undefined && sameOrigin(parsed, origin) && OWN_AGENT_PATHS.test(decodedPath(parsed))) return true;
  const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
  return port === own.port() && isThisHost(parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase(), own.host);
}

function sameOrigin(url: URL, origin: string): boolean {
  try {
    return url.origin === new URL(origin).origin;
  } catch {
    return false;
  }
}

/** The path as the router matches it: case and percent-encoding do not tell routes apart. */
function decodedPath(url: URL): string {
  try {
    return decodeURIComponent(url.pathname).toLowerCase();
  } catch {
    return url.pathname.toLowerCase();
  }
}

function isThisHost(hostname: string, configuredHost: string): boolean {
  if (hostname === configuredHost.toLowerCase() || hostname === 'localhost' || hostname.endsWith('.localhost'))
    return true;
  if (!ipaddr.isValid(hostname)) return false;
  const address = ipaddr.process(hostname);
  if (['loopback', 'unspecified'].includes(address.range())) return true;
  return Object.values(os.networkInterfaces())
    .flat()
    .some((network) => network !== undefined && ipaddr.process(network.address).toString() === address.toString());
}
