import type { IncomingMessage } from 'node:http';

/**
 * The key a principal's limits are counted under: its tenant's, so keys a service mints share its
 * budget; kinds are told apart, so equal ids never share one.
 */
export const principalKey = (principal: { kind: string; id: string; tenantId?: string }): string =>
  `${principal.kind}:${principal.tenantId ?? principal.id}`;

/** The address a connection comes from: the proxy's, behind one. */
export const addressOf = (socket: { remoteAddress?: string }): string => socket.remoteAddress ?? 'unknown';

/** The address of the client a request is from, as the per-address limits and the request log name it. */
export type ClientAddress = (request: IncomingMessage) => string;

/**
 * With `trustedProxies` hops in front, the client is the address the farthest trusted proxy appended
 * to X-Forwarded-For, as Koa's `proxy` with `maxIpsCount` reads it: entries before it are the
 * client's to write, so they are never believed. Without trusted proxies the header is ignored.
 */
export function clientAddressOf(trustedProxies: number): ClientAddress {
  return (request) => {
    const peer = addressOf(request.socket);
    if (trustedProxies === 0) return peer;
    const header = request.headers['x-forwarded-for'];
    const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    return forwarded.slice(-trustedProxies)[0] ?? peer;
  };
}
