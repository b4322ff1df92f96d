import fs from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { humanTokens } from './humans';
import { testStack } from './test-stack';
import { useForFile } from './use-for-file';

/** Debian's Chromium: the tests never download a browser. */
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/**
 * `describe` for tests in Chromium. Without it they fail at once, saying how to install it: a
 * skipped block would let a run without the browser pass as if the app had been tested.
 */
export function describeInChromium(name: string, body: () => void): void {
  describe(name, () => {
    beforeAll(() => {
      if (!fs.existsSync(CHROMIUM))
        throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (the web app's tests run in it)`);
    });
    body();
  });
}

/** One headless Chromium for the file's tests, closed after them. */
export function useBrowser(): () => Browser {
  return useForFile(
    'useBrowser: Chromium',
    async () => {
      const { chromium } = await import('playwright-core');
      return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    },
    (browser) => browser.close(),
  );
}

/** The app's page at `route` (`#/rooms`, say) for a person signed in with the identity provider's two tokens. */
export async function signedInPage(browser: Browser, person: string, route = ''): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const { session, identity } = await humanTokens(person);
  await page.goto(`${testStack().baseUrl}/app/`);
  await page.locator('#session-token').fill(session);
  await page.locator('#identity-token').fill(identity);
  await page.locator('#sign-in-tokens button[type=submit]').click();
  await page.locator('#sign-out').waitFor();
  if (route !== '') await page.goto(`${testStack().baseUrl}/app/${route}`);
  return page;
}

/** A person's headers for the API, as the app sends them. */
export async function personHeaders(person: string): Promise<Record<string, string>> {
  const { session, identity } = await humanTokens(person);
  return { Authorization: `Bearer ${session}`, 'X-Identity-Token': identity };
}
