import { randomUUID } from 'node:crypto';
import type { Page, WebSocketRoute } from 'playwright-core';
import { APP_CONTENT_SECURITY_POLICY } from '../../src/web-app/content-security-policy';
import { completes, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { describeInChromium, personHeaders, signedInPage, useBrowser } from '../support/browser';
import { call } from '../support/http';
import { humanTokens } from '../support/humans';
import { createRoom, RoomClient } from '../support/room-client';
import { testStack } from '../support/test-stack';
import { reportOn, tool, waitForTask } from '../support/tasks';
import { STUCK_AFTER_MS, until } from '../support/until';

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
    const bare = await fetch(`${testStack().baseUrl}/app`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([302, '/app/']);
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

  it('chats with an agent answering over its socket, shows a <script> message as text, and follows a room task', async () => {
    const agent = await registerAgent({ capabilities: { tools: [tool('echo', { text: { type: 'string' } })] } });
    const room = await createRoom({ participants: [{ type: 'AGENT', participantId: agent.agentId }] });
    const person = `person-${randomUUID()}`;
    // Every connection of the page to the room, for the test to drop one as a network would.
    const routes: WebSocketRoute[] = [];
    let releaseSecond: () => void = () => undefined;
    const secondMayConnect = new Promise<void>((resolve) => (releaseSecond = resolve));
    const page = await signedInPage(browser(), person);
    await page.routeWebSocket(/\/parties\/chat-server\//, async (route) => {
      routes.push(route);
      if (routes.length === 2) await secondMayConnect;
      route.connectToServer();
    });
    await page.goto(`${testStack().baseUrl}/app/#/rooms/${room.roomId}`);
    const agentSocket = await RoomClient.connect(room.roomId, { apiKey: agent.apiKey }, { joinedAs: agent.agentId });
    const asked = new Map<string, string>();
    agentSocket.ws.on('message', (raw) => {
      const frame = JSON.parse((raw as Buffer).toString());
      if (frame.type === 'MESSAGE' && frame.data.sender.type === 'HUMAN')
        agentSocket.sendMessage(`echo: ${frame.data.content}`);
      // A task asks the room who it is for, then answers with the params and the input.
      if (frame.type === 'TASK') {
        asked.set(frame.data.taskId, frame.data.params.text);
        agentSocket.send({
          type: 'TASK_RESULT',
          data: {
            taskId: frame.data.taskId,
            status: 'input-required',
            message: 'For whom?',
            inputSchema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
          },
        });
      }
      if (frame.type === 'TASK_INPUT')
        agentSocket.send({
          type: 'TASK_RESULT',
          data: {
            taskId: frame.data.taskId,
            status: 'completed',
            result: { text: `echoed ${asked.get(frame.data.taskId)} for ${frame.data.input.who}` },
          },
        });
    });
    try {
      await page.locator('.connection.live').waitFor({ timeout: STUCK_AFTER_MS });
      await page.locator('.presence').getByText(agent.agentId).waitFor({ timeout: STUCK_AFTER_MS });

      await page.locator('#message').fill('hello');
      await page.locator('.composer button').click();
      await shows(page, 'echo: hello');

      const script = '<script>window.injected = 1</script><img src="x" onerror="window.injected = 2">';
      await page.locator('#message').fill(script);
      await page.locator('.composer button').click();
      await shows(page, `echo: ${script}`);
      expect(await page.locator('.messages .content').getByText(script, { exact: true }).count()).toBe(1);
      expect(await page.locator('.messages script, .messages img').count()).toBe(0);
      expect(await page.evaluate<unknown>('window.injected')).toBeUndefined();

      await page.locator('#task-agent').selectOption(agent.agentId);
      await page.locator('#task-operation').fill('tools/echo');
      await page.locator('#task-params').fill('{"text": "ping"}');
      await page.locator('.task-request button').click();
      const inputForm = page.locator('.messages form.input-request');
      await inputForm.waitFor({ timeout: STUCK_AFTER_MS });
      await shows(page, 'For whom?');
      await inputForm.locator('input[name=who]').fill('Ada');
      await inputForm.locator('button[type=submit]').click();
      await page.locator('.task-update .status-completed').waitFor({ timeout: STUCK_AFTER_MS });
      await shows(page, /echoed ping for Ada/);

      // Dropped: what the agent says meanwhile comes when the page is back, once, after what it had.
      await routes[0].close();
      await page.locator('.connection:not(.live)').waitFor({ timeout: STUCK_AFTER_MS });
      agentSocket.sendMessage('said while you were away');
      await until(() => routes.length === 2, 'the page connects again');
      releaseSecond();
      await page.locator('.connection.live').waitFor({ timeout: STUCK_AFTER_MS });
      await shows(page, 'said while you were away');
      agentSocket.sendMessage('and after');
      await shows(page, 'and after');
      const contents = await page.locator('.messages .content').allTextContents();
      expect(contents).toEqual([
        'hello',
        'echo: hello',
        script,
        `echo: ${script}`,
        'said while you were away',
        'and after',
      ]);
    } finally {
      await agentSocket.close();
      await page.close();
    }
  });

  it('pages a room’s history backwards', async () => {
    const room = await createRoom();
    const person = `person-${randomUUID()}`;
    const headers = await personHeaders(person);
    for (let n = 1; n <= 60; n += 1) {
      const posted = await call('POST', `/rooms/${room.roomId}/messages`, { headers, body: { content: `line ${n}` } });
      expect(posted.status).toBe(201);
    }
    const page = await signedInPage(browser(), person, `#/rooms/${room.roomId}`);
    try {
      const contents = page.locator('.messages .content');
      await page.locator('.connection.live').waitFor({ timeout: STUCK_AFTER_MS });
      expect(await contents.count()).toBe(50);
      expect(await contents.first().textContent()).toBe('line 11');
      await page.locator('button.older').click();
      await page.getByText('line 1', { exact: true }).waitFor({ timeout: STUCK_AFTER_MS });
      expect(await contents.allTextContents()).toEqual(Array.from({ length: 60 }, (_, index) => `line ${index + 1}`));
      expect(await page.locator('button.older').isHidden()).toBe(true);
    } finally {
      await page.close();
    }
  });

  it('draws a composition as its graph and follows it live to the end, results and attempts included', async () => {
    const person = `person-${randomUUID()}`;
    const headers = await personHeaders(person);
    let releaseFirst: () => void = () => undefined;
    const firstMayAnswer = new Promise<void>((resolve) => (releaseFirst = resolve));
    const marker = randomUUID().slice(0, 8);
    const agent = await registerAgent({
      mcpUrl: agents().route(`compose-${marker}`, (received) => ({
        status: 200,
        body: { status: 'completed', result: { text: `done ${received.body.params.text}` } },
        heldUntil: received.body.params.text === 'first' ? firstMayAnswer : undefined,
      })),
      capabilities: { tools: [tool('step', { text: { type: 'string' } })] },
    });
    const step = (text: unknown, parents?: string[]) => ({
      agentId: agent.agentId,
      operation: 'tools/step',
      params: { text },
      ...(parents ? { parents } : {}),
    });
    const composed = await call('POST', '/tasks/compose', {
      headers,
      body: [
        step('first'),
        step({ source: { taskId: '0', field: 'text' }, type: 'string' }, ['0']),
        step('third', ['0']),
      ],
    });
    expect(composed.status).toBe(202);
    const compositionId = composed.body[0].compositionId;
    const page = await signedInPage(browser(), person, `#/compositions/${compositionId}`);
    try {
      const nodes = page.locator('.graph .node');
      await nodes.nth(2).waitFor({ timeout: STUCK_AFTER_MS });
      expect(await page.locator('.graph .edges path').count()).toBe(2);
      expect(await page.locator('.task-head .status').textContent()).toBe('pending');
      releaseFirst();
      await page.locator('.task-head .status-completed').waitFor({ timeout: STUCK_AFTER_MS });
      await page.locator('.graph .node-completed').nth(2).waitFor({ timeout: STUCK_AFTER_MS });
      await shows(page, /done done first/);
      expect(await page.locator('.graph .node .meta').first().textContent()).toContain('attempts 1');
      // The record may say so a moment before the last event comes down the stream.
      await page.locator('.events .event-end').nth(2).waitFor({ timeout: STUCK_AFTER_MS });
      expect(await page.locator('.task-head a.run-link').getAttribute('href')).toBe(
        `http://127.0.0.1:8233/namespaces/${testStack().temporalNamespace}/workflows/composition-${compositionId}`,
      );
    } finally {
      await page.close();
    }
  });

  it('answers an input request through the form generated from its inputSchema, checked by the browser and the service', async () => {
    const person = `person-${randomUUID()}`;
    const marker = randomUUID().slice(0, 8);
    const agent = await registerAgent({
      mcpUrl: agents().route(`asks-${marker}`, (received) =>
        received.body.input === undefined ? { status: 202, body: { status: 'received' } } : { status: 200, body: {} },
      ),
    });
    const started = await call('POST', '/tasks', {
      headers: await personHeaders(person),
      body: { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'order' } },
    });
    expect(started.status).toBe(202);
    const { taskId } = started.body;
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    const inputSchema = {
      type: 'object',
      properties: {
        name: { type: 'string', title: 'Name', minLength: 2 },
        count: { type: 'integer', minimum: 1, maximum: 10 },
        urgent: { type: 'boolean', default: true },
        colour: { enum: ['red', 'green', 'blue'], default: 'green' },
        note: { type: 'string', default: 'n/a' },
        code: { type: 'string', not: { const: 'nope' } },
      },
      required: ['name', 'count', 'colour'],
      additionalProperties: false,
    };
    const asked = await reportOn(taskId, agent.apiKey, {
      status: 'input-required',
      message: 'How many, and <b>which colour</b>?',
      inputSchema,
    });
    expect(asked.status).toBe(200);
    const page = await signedInPage(browser(), person, `#/tasks/${taskId}`);
    try {
      const form = page.locator('form.input-request');
      await form.waitFor({ timeout: STUCK_AFTER_MS });
      await shows(page, 'How many, and <b>which colour</b>?');
      expect(await form.locator('select[name=colour]').inputValue()).toBe('1');
      expect(await form.locator('input[name=note]').inputValue()).toBe('n/a');
      expect(await form.locator('input[name=urgent]').isChecked()).toBe(true);

      // The browser refuses what the schema's own checks refuse: nothing is sent.
      await form.locator('input[name=name]').fill('A');
      await form.locator('button[type=submit]').click();
      expect(await form.locator(':invalid').count()).toBeGreaterThan(0);
      // The service checks what the form cannot (`not`), and the page says why.
      await form.locator('input[name=name]').fill('Ada');
      await form.locator('input[name=count]').fill('3');
      await form.locator('input[name=code]').fill('nope');
      await form.locator('button[type=submit]').click();
      await shows(page, /VALIDATION_ERROR/);
      expect(
        agents()
          .callsTo(`asks-${marker}`)
          .filter((received) => received.body.input),
      ).toEqual([]);

      await form.locator('input[name=code]').fill('XYZ');
      await form.locator('input[name=urgent]').uncheck();
      await form.locator('select[name=colour]').selectOption({ label: 'blue' });
      await form.locator('button[type=submit]').click();
      const answered = await until(
        () =>
          agents()
            .callsTo(`asks-${marker}`)
            .find((received) => received.body.input),
        'the agent gets the input',
      );
      expect(answered.body.input).toEqual({
        name: 'Ada',
        count: 3,
        urgent: false,
        colour: 'blue',
        note: 'n/a',
        code: 'XYZ',
      });
      expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { ok: true } })).status).toBe(200);
      await page.locator('.task-details .status-completed').waitFor({ timeout: STUCK_AFTER_MS });
      await page.locator('.events .event-end').waitFor({ timeout: STUCK_AFTER_MS });
      expect(await page.locator('.events li strong').allTextContents()).toEqual(
        expect.arrayContaining(['input_required', 'input_received', 'completed']),
      );
    } finally {
      await page.close();
    }
  });

  it('resumes a task’s event stream that broke with Last-Event-ID, with no gap and no repeat', async () => {
    const person = `person-${randomUUID()}`;
    const agent = await registerAgent({ mcpUrl: agents().route(`resume-${randomUUID()}`, completes({ text: 'ok' })) });
    const started = await call('POST', '/tasks', {
      headers: await personHeaders(person),
      body: { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'resume' } },
    });
    const { taskId } = started.body;
    const logged = await waitForTask(taskId);
    expect(logged.status).toBe('completed');
    const page = await signedInPage(browser(), person);
    // The first stream breaks after its first event, as a dropped connection would end it.
    const resumedFrom: Array<string | undefined> = [];
    await page.route(`**/tasks/${taskId}/events`, async (route) => {
      resumedFrom.push(route.request().headers()['last-event-id']);
      if (resumedFrom.length > 1) return route.continue();
      const whole = await route.fetch();
      const blocks = (await whole.text()).split('\n\n');
      const upToFirstEvent = blocks.slice(0, blocks.findIndex((block) => block.startsWith('id: ')) + 1);
      return route.fulfill({
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        body: `${upToFirstEvent.join('\n\n')}\n\n`,
      });
    });
    try {
      await page.goto(`${testStack().baseUrl}/app/#/tasks/${taskId}`);
      await page.locator('.events .event-end').waitFor({ timeout: STUCK_AFTER_MS });
      expect(resumedFrom).toEqual([undefined, '1']);
      const seqs = await page
        .locator('.events li')
        .evaluateAll((items) => items.map((item) => item.getAttribute('data-seq')));
      const all = await call('GET', `/tasks/${taskId}/events?format=json`, { headers: await personHeaders(person) });
      expect(seqs).toEqual(all.body.map((event: { seq: number }) => String(event.seq)));
    } finally {
      await page.close();
    }
  });
});
