import { ApiError } from '../http/errors';
import { allowedOrigins, checkOrigin } from './allowed-origins';

describe('the web origins that may call /mcp', () => {
  const mayCall = allowedOrigins(['https://app.example'], 'https://acs.example/base');

  it('are loopback pages, PUBLIC_URL and MCP_ALLOWED_ORIGINS; a request without Origin passes', () => {
    for (const origin of [
      'http://localhost:5173',
      'http://127.0.0.1',
      'https://[::1]:8443',
      'https://app.example',
      'https://acs.example',
    ])
      expect({ origin, allowed: mayCall(origin) }).toEqual({ origin, allowed: true });
    expect(() => checkOrigin(undefined, mayCall)).not.toThrow();
  });

  it('refuse any other page with 403, a rebinding one included', () => {
    for (const origin of [
      'http://evil.example.com',
      'https://app.example:444',
      'http://localhost.evil.example',
      'null',
      'file://',
    ]) {
      expect({ origin, allowed: mayCall(origin) }).toEqual({ origin, allowed: false });
      expect(() => checkOrigin(origin, mayCall)).toThrow(ApiError);
    }
  });
});
