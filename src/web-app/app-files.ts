import fs from 'node:fs';
import path from 'node:path';

/** Where the app's sources are; `npm run build:app` bundles its script into `dist/`. */
export const APP_DIR = path.join(__dirname, '..', '..', 'app');

/** One file the app is made of, as served. */
export interface AppFile {
  type: string;
  body: string;
}

/** What the page needs to know of the service that the API does not tell: where Temporal's Web UI is. */
export interface AppSettings {
  temporalUiUrl?: string;
  temporalNamespace: string;
}

/**
 * The app's files by name, read once: index.html (with the settings as meta elements, since the
 * policy admits no inline script), app.css, and the bundle app.js. Undefined when the bundle was
 * never built.
 */
export function readAppFiles(settings: AppSettings, dir = APP_DIR): Map<string, AppFile> | undefined {
  const bundle = path.join(dir, 'dist', 'app.js');
  if (!fs.existsSync(bundle)) return undefined;
  const meta = (name: string, value: string) => `<meta name="${name}" content="${escapeAttribute(value)}" />`;
  const settingsMeta = [
    meta('acs-temporal-ui', settings.temporalUiUrl ?? ''),
    meta('acs-temporal-namespace', settings.temporalNamespace),
  ].join('\n    ');
  const index = fs.readFileSync(path.join(dir, 'index.html'), 'utf8').replace('<!-- settings -->', settingsMeta);
  return new Map([
    ['index.html', { type: 'text/html; charset=utf-8', body: index }],
    ['app.css', { type: 'text/css; charset=utf-8', body: fs.readFileSync(path.join(dir, 'app.css'), 'utf8') }],
    ['app.js', { type: 'text/javascript; charset=utf-8', body: fs.readFileSync(bundle, 'utf8') }],
  ]);
}

const escapeAttribute = (value: string): string =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
