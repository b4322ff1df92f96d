import { leadsToOwnService } from './own-endpoint';

const own = { host: '127.0.0.1', port: () => 3000 };

describe('leadsToOwnService', () => {
  it.each([
    'http://127.0.0.1:3000/a2a/x',
    'http://127.0.0.1:3000/anything',
    'http://localhost:3000/a2a/x',
    'http://api.localhost:3000/',
    'http://127.1:3000/a2a/x',
    'http://0x7f.1:3000/a2a/x',
    'http://2130706433:3000/',
    'http://0:3000/',
    'http://0.0.0.0:3000/',
    'http://[::1]:3000/',
    'http://[::]:3000/',
    'http://[::ffff:127.0.0.1]:3000/',
  ])('finds %s on its own port', (url) => expect(leadsToOwnService(url, own)).toBe(true));

  it.each([
    'http://127.0.0.1:3001/a2a/x',
    'http://127.0.0.1/a2a/x',
    'https://agents.example/a2a/x',
    'http://10.1.2.3:3000/a2a/x',
    'not a url',
  ])('lets %s be', (url) => expect(leadsToOwnService(url, own)).toBe(false));

  it('finds the A2A and MCP paths under the origin it was reached at, however spelt, and no other path there', () => {
    const origin = 'https://acs.example.com';
    for (const url of [
      'https://acs.example.com/a2a/x',
      'https://ACS.example.com:443/A2A/x',
      'https://acs.example.com//a2a/x',
      'https://acs.example.com/%61%32%61/x',
      'https://acs.example.com/a2a/../a2a/x',
      'https://acs.example.com/mcp',
      'https://acs.example.com/mcp/session',
    ])
      expect([url, leadsToOwnService(url, own, origin)]).toEqual([url, true]);
    for (const url of [
      'https://acs.example.com/agents/x',
      'https://acs.example.com/a2ax',
      'http://acs.example.com/a2a/x',
      'https://other.example.com/a2a/x',
    ])
      expect([url, leadsToOwnService(url, own, origin)]).toEqual([url, false]);
  });

  it('knows no port before the API listens', () => {
    expect(leadsToOwnService('http://127.0.0.1:3000/a2a/x', { host: '127.0.0.1', port: () => undefined })).toBe(false);
  });
});
