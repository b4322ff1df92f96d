/**
 * The policy of every answer under /app/. The app is its own script and stylesheet, talks only to
 * this origin (HTTP and the room WebSocket), is framed by nobody, and writes the page through the
 * DOM's text APIs alone: Trusted Types with no policy make any HTML sink (innerHTML,
 * insertAdjacentHTML, document.write) throw, so no text from an agent or a person can become markup.
 */
export const APP_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  'trusted-types',
].join('; ');

/** Sent with the app's files besides the answer headers every route sends. */
export const APP_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': APP_CONTENT_SECURITY_POLICY,
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};
