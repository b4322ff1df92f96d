/** A URL's user name and password (`scheme://user:password@`): up to the last `@` before its host ends. */
const USERINFO = /\b([a-z][a-z\d+.-]*:\/\/)[^\s/\\?#]*@/gi;

/** Whether `url` carries a user name or password. */
export function hasCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false;
  }
}

/**
 * `text` with the user name and password of every URL in it replaced by `[redacted]`: for messages
 * and log lines that name a URL, or repeat an error that does (fetch's refusal of a URL with
 * credentials quotes it whole).
 */
export function withoutCredentials(text: string): string {
  return text.replace(USERINFO, '$1[redacted]@');
}
