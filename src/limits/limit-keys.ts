/**
 * The key a principal's limits are counted under: its tenant's, so keys a service mints share its
 * budget; kinds are told apart, so equal ids never share one.
 */
export const principalKey = (principal: { kind: string; id: string; tenantId?: string }): string =>
  `${principal.kind}:${principal.tenantId ?? principal.id}`;

/** The address a connection comes from, as the limits count it: the proxy's, behind one. */
export const addressOf = (socket: { remoteAddress?: string }): string => socket.remoteAddress ?? 'unknown';
