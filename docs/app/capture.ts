// Screenshots of the web app's pages for docs/app.md, into this folder. Builds the app, starts the
// servers and the service as `npm start` runs them (on free loopback ports, data in a temp folder),
// registers a few loopback agents, and photographs each page with Debian's Chromium.
// Run: npx tsx docs/app/capture.ts   (needs /usr/bin/chromium: apt-get install -y chromium)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { AgentServer, type AgentBehaviour } from '../../test/support/agent-server';
import { registerAgent } from '../../test/support/agents';
import { CHROMIUM, CHROMIUM_ARGS, personHeaders, signedInPage } from '../../test/support/browser';
import { call } from '../../test/support/http';
import { startLocalStack, type LocalStack } from '../../test/support/local-stack';
import { createRoom, RoomClient } from '../../test/support/room-client';
import { reportOn, tool, waitForTask } from '../../test/support/tasks';

const VIEWPORT = { width: 1280, height: 860 };
const IMAGES = __dirname;
/** The whole run takes well under a minute; past this something hangs, and the script stops what it started. */
const DEADLINE_MS = 5 * 60_000;
/** Longest wait for a page to show what it should. */
const VIEW_MS = 30_000;
const PERSON = 'ada';

const begun = Date.now();
const say = (message: string) =>
  process.stdout.write(`[capture ${((Date.now() - begun) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);

/** Completes at once with a text made of the params' text. */
const answersWith =
  (mark: string): AgentBehaviour =>
  (received) =>
    received.body?.input !== undefined
      ? { status: 200, body: {} }
      : { status: 200, body: { status: 'completed', result: { text: `${mark}: ${received.body.params.text}` } } };

const started: { stack?: LocalStack; agents?: AgentServer; browser?: Browser; socket?: RoomClient } = {};

async function stopAll(): Promise<void> {
  await started.socket?.close().catch(() => undefined);
  await started.browser?.close().catch(() => undefined);
  await started.agents?.close().catch(() => undefined);
  await started.stack?.stop();
}

async function main(): Promise<void> {
  if (!fs.existsSync(CHROMIUM)) {
    process.stderr.write(`${CHROMIUM} is missing. Install Debian's Chromium: apt-get install -y chromium\n`);
    process.exit(2);
  }
  const deadline = setTimeout(() => {
    say(`not done within ${DEADLINE_MS / 1000} s: stopping`);
    void stopAll().finally(() => process.exit(1));
  }, DEADLINE_MS);

  say('building the app, starting Temporal, FerretDB and the service');
  execFileSync('npm', ['run', '-s', 'build:app'], { stdio: 'inherit' });
  started.stack = await startLocalStack({ runDirPrefix: 'acs-app-capture-', database: 'acs_app_capture' });
  const agents = (started.agents = await AgentServer.start());
  const { chromium } = await import('playwright-core');
  const browser = (started.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }));
  const headers = await personHeaders(PERSON);

  const text = { text: { type: 'string', description: 'The text' } };
  const translator = await registerAgent({
    name: 'Translator',
    description: 'Translates a text into French or German',
    mcpUrl: agents.route('translator', answersWith('translated')),
    capabilities: {
      tools: [
        {
          ...tool('translate', { ...text, language: { enum: ['fr', 'de'], default: 'fr' } }, ['text']),
          description: 'Translates a text',
        },
      ],
    },
  });
  const summariser = await registerAgent({
    name: 'Summariser',
    description: 'Shortens a text',
    mcpUrl: agents.route('summariser', answersWith('summary')),
    capabilities: { tools: [{ ...tool('summarise', text), description: 'Shortens a text to a sentence' }] },
  });
  const reviewer = await registerAgent({
    name: 'Reviewer',
    description: 'Proofreads a text, and asks a person when in doubt',
    mcpUrl: agents.route('reviewer', (received) =>
      received.body?.input !== undefined ? { status: 200, body: {} } : { status: 202, body: { status: 'received' } },
    ),
    capabilities: { tools: [{ ...tool('review', text), description: 'Proofreads a text' }] },
  });

  const page = await browser.newPage({ viewport: VIEWPORT });
  await page.goto(`${started.stack.stack.baseUrl}/app/`);
  await shoot(page, 'sign-in', '#sign-in-tokens');
  await page.close();

  say('agents');
  const agentsPage = await signedInPage(browser, PERSON, '#/agents');
  await agentsPage.setViewportSize(VIEWPORT);
  const card = agentsPage.locator(`[data-agent-id="${translator.agentId}"]`);
  await card.locator('summary').click({ timeout: VIEW_MS });
  await card.locator('.run-tool').click();
  await card.locator('input[name=text]').fill('The release is out');
  await shoot(agentsPage, 'agents', '.run');
  await agentsPage.close();

  say('rooms and a room');
  const room = await createRoom({
    name: 'Launch team',
    description: 'People and agents preparing the launch',
    participants: [{ type: 'AGENT', participantId: translator.agentId }],
  });
  await createRoom({ name: 'Support', description: 'Questions from customers' });
  const socket = (started.socket = await RoomClient.connect(
    room.roomId,
    { apiKey: translator.apiKey },
    { joinedAs: translator.agentId },
  ));
  socket.ws.on('message', (raw) => {
    const frame = JSON.parse((raw as Buffer).toString());
    if (frame.type === 'MESSAGE' && frame.data.sender.type === 'HUMAN')
      socket.sendMessage('Happy to. Ask me for tools/translate with the text, and I will answer here.');
    if (frame.type === 'TASK')
      socket.send({
        type: 'TASK_RESULT',
        data: { taskId: frame.data.taskId, status: 'completed', result: { text: 'La version est publiée' } },
      });
  });
  const roomPage = await signedInPage(browser, PERSON, '#/rooms');
  await roomPage.setViewportSize(VIEWPORT);
  await shoot(roomPage, 'rooms', 'text=Launch team');
  await roomPage.goto(`${started.stack.stack.baseUrl}/app/#/rooms/${room.roomId}`);
  await roomPage.locator('.connection.live').waitFor({ timeout: VIEW_MS });
  await roomPage.locator('#message').fill('Could you translate the release notes into French?');
  await roomPage.locator('.composer button').click();
  await roomPage.getByText('Happy to.').waitFor({ timeout: VIEW_MS });
  await roomPage.locator('#task-agent').selectOption(translator.agentId);
  await roomPage.locator('#task-operation').fill('tools/translate');
  await roomPage.locator('#task-params').fill('{"text": "The release is out", "language": "fr"}');
  await roomPage.locator('.task-request button').click();
  await shoot(roomPage, 'room', '.task-update .status-completed');
  await roomPage.close();

  say('a composition');
  const step = (agentId: string, operation: string, params: Record<string, unknown>, parents?: string[]) => ({
    agentId,
    operation,
    params,
    ...(parents ? { parents } : {}),
  });
  const from = (parent: string) => ({ source: { taskId: parent, field: 'text' }, type: 'string' });
  const composed = await call('POST', '/tasks/compose', {
    headers,
    body: [
      step(summariser.agentId, 'tools/summarise', { text: 'the quarterly report' }),
      step(translator.agentId, 'tools/translate', { text: from('0'), language: 'fr' }, ['0']),
      step(translator.agentId, 'tools/translate', { text: from('0'), language: 'de' }, ['0']),
    ],
  });
  if (composed.status !== 202) throw new Error(`POST /tasks/compose answered ${composed.status}`);
  const compositionPage = await signedInPage(browser, PERSON, `#/compositions/${composed.body[0].compositionId}`);
  await compositionPage.setViewportSize(VIEWPORT);
  await shoot(compositionPage, 'composition', '.task-head .status-completed');
  await compositionPage.close();

  say('an input request');
  const asked = await call('POST', '/tasks', {
    headers,
    body: { agentId: reviewer.agentId, operation: 'tools/review', params: { text: 'Teh release is out' } },
  });
  if (asked.status !== 202) throw new Error(`POST /tasks answered ${asked.status}`);
  const taskId = asked.body.taskId as string;
  await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
  await reportOn(taskId, reviewer.apiKey, {
    status: 'input-required',
    message: 'Is "Teh" a typo for "The"?',
    inputSchema: {
      type: 'object',
      properties: {
        typo: { type: 'boolean', title: 'It is a typo', default: true },
        correction: { type: 'string', default: 'The' },
        severity: { enum: ['minor', 'major'], default: 'minor' },
        confidence: { type: 'integer', minimum: 1, maximum: 5, description: '1 to 5' },
      },
      required: ['typo', 'confidence'],
    },
  });
  const taskPage = await signedInPage(browser, PERSON, `#/tasks/${taskId}`);
  await taskPage.setViewportSize(VIEWPORT);
  await shoot(taskPage, 'input-request', 'form.input-request');
  await taskPage.close();

  clearTimeout(deadline);
  await stopAll();
  fs.rmSync(started.stack.runDir, { recursive: true, force: true });
  say('done');
}

/** Once `ready` shows, the page as `{name}.png`. */
async function shoot(page: Page, name: string, ready: string): Promise<void> {
  await page.locator(ready).first().waitFor({ timeout: VIEW_MS });
  await page.waitForLoadState('networkidle', { timeout: 2_000 }).catch(() => undefined);
  await page.screenshot({ path: path.join(IMAGES, `${name}.png`) });
  say(`${name}.png`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `[capture] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    if (started.stack) process.stderr.write(`[capture] logs kept in ${started.stack.runDir}\n`);
    void stopAll().finally(() => process.exit(1));
  },
);
