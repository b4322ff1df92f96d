import type { IncomingMessage } from 'node:http';
import { clientAddressOf, principalKey } from './limit-keys';

const request = (forwardedFor?: string | string[]): IncomingMessage =>
  ({
    socket: { remoteAddress: '192.0.2.1' },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  }) as unknown as IncomingMessage;

describe('clientAddressOf', () => {
  it('ignores X-Forwarded-For without trusted proxies', () => {
    expect(clientAddressOf(0)(request('10.0.0.1'))).toBe('192.0.2.1');
  });

  it('takes the entry the farthest trusted proxy appended, never one the client wrote before it', () => {
    expect(clientAddressOf(1)(request('10.0.0.9, 10.0.0.1'))).toBe('10.0.0.1');
    expect(clientAddressOf(2)(request(['10.0.0.9, 10.0.0.1', '10.0.0.2']))).toBe('10.0.0.1');
    expect(clientAddressOf(2)(request('10.0.0.1'))).toBe('10.0.0.1');
  });

  it('falls back to the peer when the proxy sent no header', () => {
    expect(clientAddressOf(1)(request())).toBe('192.0.2.1');
    expect(clientAddressOf(1)(request(' , '))).toBe('192.0.2.1');
  });
});

describe('principalKey', () => {
  it("counts a key under its tenant's id, and a kind apart from another's", () => {
    expect(principalKey({ kind: 'service', id: 'child', tenantId: 'parent' })).toBe('service:parent');
    expect(principalKey({ kind: 'service', id: 'parent' })).toBe('service:parent');
    expect(principalKey({ kind: 'agent', id: 'parent' })).toBe('agent:parent');
  });
});
