import dns from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { invalid } from '../http/errors';
import { hasCredentials } from '../util/url-credentials';

/**
 * The guard refused the address a URL leads to: a decision of policy, which no retry changes. Its
 * message names no address, as it reaches the task's creator and the agent, who have no business
 * learning what a name resolves to inside the service's network; `address` is for the operator's log.
 */
export class DestinationRefused extends Error {
  constructor(readonly address: string) {
    super('the service does not call loopback, private or link-local addresses');
    this.name = 'DestinationRefused';
  }
}

/**
 * The rules for the URLs the service calls or posts results to (an agent's mcpUrl and callbackUrl, a
 * task's callbackUrl): https unless ALLOW_INSECURE_AGENT_URLS, and no user name or password, which
 * would show wherever the URL does (messages, logs); else 400 VALIDATION_ERROR naming `field`.
 * `position` is the element's index in a composition, named in the message and the path.
 */
export function requireCallableUrl(
  url: string | undefined,
  field: string,
  allowInsecure: boolean,
  position?: number,
): void {
  if (url === undefined) return;
  const [where, path] = position === undefined ? ['', `/${field}`] : [`Task ${position}: `, `/${position}/${field}`];
  if (!allowInsecure && !/^https:/i.test(url))
    throw invalid(`${where}${field} must be an https URL`, [{ path, message: 'must use https' }]);
  if (hasCredentials(url)) {
    throw invalid(
      `${where}${field} must not carry credentials (user:password@): an MCP or A2A agent takes them in headers`,
      [{ path, message: 'must not contain a user name or password' }],
    );
  }
}

/**
 * True only for globally routable unicast addresses (an IPv4-mapped IPv6 address counts as its IPv4).
 * IPv4-compatible addresses (::/96, deprecated) are refused whatever they embed: ipaddr.js calls
 * `::7f00:1` unicast, and a stack that still routes them reaches 127.0.0.1.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return false;
  return parsed.range() === 'unicast';
}

/**
 * An undici dispatcher for calls to URLs that callers supply (agents' mcpUrl, callback URLs). Unless
 * `allowPrivate`, it resolves the host itself and connects to the address it checked, so a name that
 * resolves to 127.0.0.1 or 169.254.169.254 (or changes between check and use) cannot slip through.
 */
export function outboundDispatcher(options: { allowPrivate: boolean; connectTimeoutMs: number }): Dispatcher {
  const connect = buildConnector({ timeout: options.connectTimeoutMs });
  if (options.allowPrivate) return new Agent({ connect });
  return new Agent({
    connect(connectOptions, callback) {
      const host = connectOptions.hostname.replace(/^\[|\]$/g, '');
      const resolved = net.isIP(host) ? Promise.resolve(host) : dns.lookup(host).then((answer) => answer.address);
      resolved.then(
        (address) => {
          if (!isPublicAddress(address)) return callback(new DestinationRefused(address), null);
          const servername = connectOptions.servername ?? (net.isIP(host) ? undefined : host);
          connect({ ...connectOptions, hostname: address, servername }, callback);
        },
        (error: Error) => callback(error, null),
      );
    },
  });
}
