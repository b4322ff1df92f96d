import { hasCredentials, withoutCredentials } from './url-credentials';

describe('withoutCredentials', () => {
  it.each([
    ['Calling https://user:pw@host.example/mcp failed', 'Calling https://[redacted]@host.example/mcp failed'],
    ['https://u:p@ss@host:8443?x=1', 'https://[redacted]@host:8443?x=1'],
    ['HTTP://token@HOST/', 'HTTP://[redacted]@HOST/'],
    ['a http://a:b@x/ and https://c:d@y#z', 'a http://[redacted]@x/ and https://[redacted]@y#z'],
    [
      'Request cannot be constructed from a URL that includes credentials: https://u:s3cret@127.0.0.1:9/x',
      'Request cannot be constructed from a URL that includes credentials: https://[redacted]@127.0.0.1:9/x',
    ],
  ])('redacts the userinfo of %s', (text, redacted) => {
    expect(withoutCredentials(text)).toBe(redacted);
  });

  it.each(['https://host/path/a@b', 'https://host?mail=a@b', 'mail me at a@b.example', 'https://host/#a@b'])(
    'leaves %s as it is',
    (text) => {
      expect(withoutCredentials(text)).toBe(text);
    },
  );
});

describe('hasCredentials', () => {
  it.each([
    ['https://user:pw@host/', true],
    ['https://user@host/', true],
    ['https://:pw@host/', true],
    ['https://host/a@b', false],
    ['not a url', false],
  ])('%s: %s', (url, expected) => {
    expect(hasCredentials(url)).toBe(expected);
  });
});
