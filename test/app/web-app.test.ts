import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { APP_CONTENT_SECURITY_POLICY } from '../../src/web-app/content-security-policy';
import { completes, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { describeInChromium, signedInPage, useBrowser } from '../support/browser';
import { call } from '../support/http';
import { humanTokens } from '../support/humans';
import { testStack } from '../support/test-stack';
import { tool } from '../support/tasks';
import { STUCK_AFTER_MS } from '../support/until';

/** Waits for `text` on the page, at most as long as any test waits for what it expects. */
const shows = (page: Page, text: string | RegExp) => page.getByText(text).first().waitFor({ timeout: STUCK_AFTER_MS });

describe('GET /app/', () => {
  it('serves the page, its script and stylesheet under a strict Content-Security-Policy, to anyone', async () => {
    for (const [path, type] of [
      ['/app/', 'text/html'],
      ['/app/app.js', 'text/javascript'],
      ['/app/app.css', 'text/css'],
    ]) {
      const reply = await call('GET', path);
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toContain(type);
      expect(reply.headers.get('content-security-policy')).toBe(APP_CONTENT_SECURITY_POLICY);
      expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect(APP_CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(APP_CONTENT_SECURITY_POLICY).toContain("require-trusted-types-for 'script'");
    expect((await call('GET', '/app/missing.js')).status).toBe(404);
  });
});

describeInChromium('the web app in Chromium', () => {
  const browser = useBrowser();
  const agents = useAgentServer();

  it('signs a person in with their tokens, keeps them in the tab only, and forgets them on sign out', async () => {
    const page = await signedInPage(browser(), `person-${randomUUID()}`);
    try {
      const stored = await page.evaluate<string | null>("sessionStorage.getItem('acs.credentials')");
      expect(JSON.parse(stored!)).toEqual({ sessionToken: expect.any(String), identityToken: expect.any(String) });
      expect(await page.evaluate<number>('localStorage.length')).toBe(0);
      expect(page.url()).not.toContain(JSON.parse(stored!).sessionToken);
      await page.locator('#sign-out').click();
      await page.locator('#sign-in-key').waitFor();
      expect(await page.evaluate<string | null>("sessionStorage.getItem('acs.credentials')")).toBeNull();
    } finally {
      await page.close();
    }
  });

  it('refuses a wrong API key with the service’s error, and signs in with a right one', async () => {
    const page = await browser().newPage();
    try {
      await page.goto(`${testStack().baseUrl}/app/`);
      await page.locator('#api-key').fill('not-a-key');
      await page.locator('#sign-in-key button').click();
      await shows(page, /UNAUTHENTICATED/);
      await page.locator('#api-key').fill(testStack().adminKey);
      await page.locator('#sign-in-key button').click();
      await page.locator('#sign-out').waitFor();
    } finally {
      await page.close();
    }
  });

  it('finds an agent, shows its tools and schemas as text, and runs a tool through the form generated from its schema', async () => {
    const marker = randomUUID().slice(0, 8);
    const agent = await registerAgent({
      name: `Searchable ${marker}`,
      description: '<b>not bold</b>',
      mcpUrl: agents().route(`echo-${marker}`, completes({ text: 'done' })),
      capabilities: { tools: [tool('shout', { text: { type: 'string', description: 'What to shout' } })] },
    });
    const person = `person-${randomUUID()}`;
    const page = await signedInPage(browser(), person, '#/agents');
    try {
      await page.locator('#agent-query').fill(marker);
      await page.locator('.search button').click();
      const card = page.locator(`[data-agent-id="${agent.agentId}"]`);
      await card.waitFor({ timeout: STUCK_AFTER_MS });
      await shows(page, '<b>not bold</b>');
      expect(await card.locator('b').count()).toBe(0);
      await card.locator('summary').click();
      await card.locator('.run-tool').click();
      await card.locator('input[name=text]').fill('hello');
      await card.locator('form.run button[type=submit]').click();
      await page.waitForURL(/#\/tasks\//, { timeout: STUCK_AFTER_MS });
      await page.locator('.task-details .status-completed').waitFor({ timeout: STUCK_AFTER_MS });
      await shows(page, '"done"');
      const taskId = page.url().split('#/tasks/')[1];
      const { session, identity } = await humanTokens(person);
      const task = await call('GET', `/tasks/${taskId}`, {
        headers: { Authorization: `Bearer ${session}`, 'X-Identity-Token': identity },
      });
      expect(task.body).toMatchObject({ status: 'completed', agentId: agent.agentId, operation: 'tools/shout' });
      expect(agents().callsTo(`echo-${marker}`)[0].body.params).toEqual({ text: 'hello' });
    } finally {
      await page.close();
    }
  });
});
