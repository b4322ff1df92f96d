// Screenshots of the Temporal Web UI for the operator's guide (docs/operators.md), into this folder.
// Starts the servers and the service as `npm start` runs them, on free loopback ports with data in a
// temp folder, runs a few tasks on loopback agents, and photographs their runs with Debian's Chromium.
// Run: npx tsx docs/operators/capture.ts   (needs /usr/bin/chromium: apt-get install -y chromium)
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { freePort } from '../../src/util/ports';
import { AgentServer, type AgentBehaviour } from '../../test/support/agent-server';
import { CHROMIUM, CHROMIUM_ARGS } from '../../test/support/browser';
import { registerAgent, type RegisteredAgent } from '../../test/support/agents';
import { call } from '../../test/support/http';
import { startLocalStack, type LocalStack } from '../../test/support/local-stack';
import { connectTemporal } from '../../test/support/temporal';
import { tool, waitForTask } from '../../test/support/tasks';
import { closedStatus, until } from '../../test/support/until';

const VIEWPORT = { width: 1400, height: 1000 };
const IMAGES = __dirname;
/** The whole run takes about a minute; past this something hangs, and the script stops what it started and fails. */
const DEADLINE_MS = 5 * 60_000;
/** Stopping the browser, the agents and the stack (the service gets 15 s, the servers 10 s each, at once). */
const STOP_MS = 40_000;
/** How long the unreachable agent's task has been retrying when it is photographed. */
const RETRYING_FOR_MS = 20_000;
/** Tallest a photograph of a short page grows (WebUi.scrollTo). */
const TALLEST_PX = 1_600;
/** Below the last thing on a page grown taller. */
const MARGIN_PX = 24;
/** Height of the Web UI's bar that stays at the top of the window. */
const TOP_BAR_PX = 60;
/** Longest wait for one view of the Web UI to show what it should. */
const VIEW_MS = 20_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const begun = Date.now();
const say = (message: string) =>
  process.stdout.write(`[capture ${((Date.now() - begun) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);

/** Each agent answers at once with its params' text, marked by what it did. */
const answersWith =
  (mark: string): AgentBehaviour =>
  (received) => ({
    status: 200,
    body: { status: 'completed', result: { text: `${mark}(${received.body.params.text})` } },
  });
/** Takes the task (202) and never reports; answers a cancellation notice with 200. */
const neverReports: AgentBehaviour = (received) =>
  received.body?.cancel ? { status: 200, body: {} } : { status: 202, body: { status: 'received' } };

/** What is running, so that a failure, Ctrl-C or the deadline stops all of it. */
const started: { stack?: LocalStack; agents?: AgentServer; browser?: Browser; temporal?: { close(): Promise<void> } } =
  {};

async function stopAll(): Promise<void> {
  await started.browser?.close().catch(() => undefined);
  await started.temporal?.close().catch(() => undefined);
  await started.agents?.close().catch(() => undefined);
  await started.stack?.stop();
}

let stopping: Promise<never> | undefined;

/** Once, whoever asks first: the deadline, Ctrl-C or a failure, which the deadline's stop may cause. */
function stopAndExit(code: number): Promise<never> {
  stopping ??= Promise.race([
    stopAll().catch((error: unknown) => say(`stopping failed: ${String(error)}`)),
    sleep(STOP_MS),
  ]).then(() => process.exit(code));
  return stopping;
}

async function main(): Promise<void> {
  // Never a browser download: Debian's Chromium or nothing.
  if (!fs.existsSync(CHROMIUM)) {
    process.stderr.write(
      `${CHROMIUM} is missing. Install Debian's Chromium: apt-get update && apt-get install -y chromium\n`,
    );
    process.exit(2);
  }
  const deadline = setTimeout(() => {
    say(`not done within ${DEADLINE_MS / 1000} s: stopping`);
    void stopAndExit(1);
  }, DEADLINE_MS);
  process.once('SIGINT', () => void stopAndExit(130));

  say('starting Temporal (with its Web UI), FerretDB and the service');
  const stack = (started.stack = await startLocalStack({
    runDirPrefix: 'acs-capture-',
    database: 'acs_capture',
    webUi: true,
    env: { LOG_LEVEL: 'warn' },
  }));
  const agents = (started.agents = await AgentServer.start());
  const { client: temporal, close } = await connectTemporal();
  started.temporal = { close };
  const { chromium } = await import('playwright-core');
  started.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const ui = new WebUi(await started.browser.newPage({ viewport: VIEWPORT }), stack.temporalUiUrl!);

  const callbacks = agents.route('callbacks', () => ({ status: 204 }));
  const register = (name: string, description: string, operation: string, mcpUrl: string): Promise<RegisteredAgent> =>
    registerAgent({
      name,
      description,
      mcpUrl,
      capabilities: { tools: [tool(operation, { text: { type: 'string' } })] },
    });
  const summariser = await register(
    'Summariser',
    'Shortens a text',
    'summarise',
    agents.route('summariser', answersWith('summary')),
  );
  const translator = await register(
    'Translator',
    'Translates a text into French',
    'translate',
    agents.route('translator', answersWith('french')),
  );
  const reviewer = await register(
    'Reviewer',
    'Proofreads a text',
    'review',
    agents.route('reviewer', answersWith('reviewed')),
  );
  const offline = await register(
    'Offline agent',
    'Registered on a port nothing listens on',
    'lookup',
    `http://127.0.0.1:${await freePort()}/mcp`,
  );
  const researcher = await register(
    'Researcher',
    'Takes the task, reports much later',
    'research',
    agents.route('researcher', neverReports),
  );

  // (b) first: it must have been retrying for a while when its turn comes.
  const retrying = await createTask({
    agentId: offline.agentId,
    operation: 'tools/lookup',
    params: { text: 'unreachable' },
    retry: { maxAttempts: 10 },
  });
  const retryingSince = Date.now();

  // (a) Summarise, then translate the summary, then review the translation.
  const from = (parent: string) => ({ source: { taskId: parent, field: 'text' }, type: 'string' });
  const composed = await call('POST', '/tasks/compose', {
    apiKey: 'admin',
    body: [
      {
        agentId: summariser.agentId,
        operation: 'tools/summarise',
        params: { text: 'the quarterly report' },
        callbackUrl: callbacks,
      },
      {
        agentId: translator.agentId,
        operation: 'tools/translate',
        params: { text: from('0') },
        parents: ['0'],
        callbackUrl: callbacks,
      },
      {
        agentId: reviewer.agentId,
        operation: 'tools/review',
        params: { text: from('1') },
        parents: ['1'],
        callbackUrl: callbacks,
      },
    ],
  });
  expectStatus(composed, 202, 'POST /tasks/compose');
  const composition = `composition-${composed.body[0].compositionId}`;
  await ended(composed.body[2].taskId, 'completed');

  // (c) Awaiting its report, and (d) cancelled while awaiting it.
  const awaitingReport = await createTask({
    agentId: researcher.agentId,
    operation: 'tools/research',
    params: { text: 'market size' },
  });
  const cancelled = await createTask({
    agentId: researcher.agentId,
    operation: 'tools/research',
    params: { text: 'competitors' },
    callbackUrl: callbacks,
  });
  for (const taskId of [awaitingReport, cancelled])
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' || task.status !== 'pending' });
  expectStatus(
    await call('POST', `/tasks/${cancelled}/cancel`, { apiKey: 'admin' }),
    200,
    'POST /tasks/{taskId}/cancel',
  );
  // Both runs show their end, callbacks and notices included.
  for (const workflowId of [composition, `task-${cancelled}`])
    await closedStatus(temporal.workflow.getHandle(workflowId), VIEW_MS);

  await sleep(RETRYING_FOR_MS - (Date.now() - retryingSince));
  const { body: view } = await call('GET', `/tasks/${retrying}`, { apiKey: 'admin' });
  if (view.phase !== 'retrying')
    throw new Error(`the unreachable agent's task should be retrying: ${JSON.stringify(view)}`);
  say(`photographing (b) the task retrying its unreachable agent (${view.attempts} attempts so far)`);
  await ui.run(`task-${retrying}`, 'retrying', ['history', 'pending-activities', 'user-metadata']);

  say('photographing (a) the composition');
  await ui.run(composition, 'composition', ['timeline', 'history', 'user-metadata']);
  say('photographing (c) the task awaiting its report, (d) the cancelled one');
  await ui.run(`task-${awaitingReport}`, 'awaiting-report', ['history', 'user-metadata']);
  await ui.run(`task-${cancelled}`, 'cancelled', ['history']);
  await ui.list(`AgentId = "${researcher.agentId}"`, 'list-by-agent', [`task-${awaitingReport}`, `task-${cancelled}`]);

  if (ui.blocked.size > 0) say(`requests the Web UI made beyond loopback, refused: ${[...ui.blocked].join(', ')}`);
  clearTimeout(deadline);
  await stopAll();
  fs.rmSync(stack.runDir, { recursive: true, force: true });
  say(`done: ${ui.written.map((file) => path.basename(file)).join(', ')}`);
}

async function createTask(body: Record<string, unknown>): Promise<string> {
  const reply = await call('POST', '/tasks', { apiKey: 'admin', body });
  expectStatus(reply, 202, 'POST /tasks');
  return reply.body.taskId;
}

async function ended(taskId: string, status: string): Promise<void> {
  const task = await waitForTask(taskId);
  if (task.status !== status) throw new Error(`task ${taskId} should have ended ${status}: ${JSON.stringify(task)}`);
}

function expectStatus(reply: { status: number; body: unknown }, status: number, what: string): void {
  if (reply.status !== status) throw new Error(`${what} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
}

/** The views of a run the guide shows, and what each must show before it is photographed. */
const RUN_VIEWS = {
  timeline: { tab: 'timeline', ready: 'Timeline', heading: 'Timeline' },
  history: { tab: 'history', ready: 'Workflow Task Scheduled', heading: 'Event History' },
  'user-metadata': { tab: 'user-metadata', ready: 'Summary', heading: undefined },
  'pending-activities': {
    tab: 'pending-activities',
    ready: /No Pending Activities|Activity Type|Attempt/,
    heading: undefined,
  },
} satisfies Record<string, { tab: string; ready: string | RegExp; heading: string | undefined }>;
type RunView = keyof typeof RUN_VIEWS;

/** The Web UI in one browser page, which reaches nothing beyond loopback. */
class WebUi {
  readonly written: string[] = [];
  /** Hosts the Web UI tried to reach beyond loopback (its news feed). */
  readonly blocked = new Set<string>();

  constructor(
    private readonly page: Page,
    private readonly baseUrl: string,
  ) {
    void page.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1' || url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
      this.blocked.add(url.host);
      return route.abort('blockedbyclient');
    });
  }

  /** Opens the run as an operator does, by its workflow id, then photographs each view as `{name}-{view}.png`. */
  async run(workflowId: string, name: string, views: RunView[]): Promise<void> {
    await this.page.goto(`${this.baseUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`);
    // The UI sends a run's page to its latest run: /workflows/{workflowId}/{runId}/timeline.
    await this.page.waitForURL(/\/workflows\/[^/]+\/[^/]+\/\w+/, { timeout: VIEW_MS });
    const runUrl = this.page.url().replace(/\/[\w-]+(\?.*)?$/, '');
    for (const view of views) {
      const { tab, ready, heading } = RUN_VIEWS[view];
      await this.page.goto(`${runUrl}/${tab}`);
      await this.shoot(`${name}-${view}`, ready, heading);
    }
  }

  /** The workflow list filtered by a search attribute query, once it lists every one of `workflowIds`. */
  async list(query: string, name: string, workflowIds: string[]): Promise<void> {
    await this.page.goto(`${this.baseUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
    // Visibility lists a run a moment after it changed: reload until every one is there.
    await until(
      async () => {
        const text = await this.page.locator('main').innerText({ timeout: VIEW_MS });
        if (workflowIds.every((id) => text.includes(id))) return true;
        await this.page.reload();
        return false;
      },
      `the list filtered by ${query}`,
      VIEW_MS,
    );
    await this.shoot(name, workflowIds[0]);
  }

  private async shoot(name: string, ready: string | RegExp, heading?: string): Promise<void> {
    await this.page.getByText(ready).filter({ visible: true }).first().waitFor({ timeout: VIEW_MS });
    if (heading) await this.scrollTo(heading);
    // Fonts, and the fade-in of what the UI fetched last; a running workflow's page polls without end.
    await this.page.waitForLoadState('networkidle', { timeout: 2_000 }).catch(() => undefined);
    await sleep(500);
    const file = path.join(IMAGES, `${name}.png`);
    await this.page.screenshot({ path: file });
    await this.page.setViewportSize(VIEWPORT);
    this.written.push(file);
  }

  /**
   * The section under `heading` from its top. A page too short to scroll that far (the event table
   * scrolls in a box of its own) is photographed taller instead: scrolled part of the way, it lost
   * half of the run's header, and left unscrolled it showed four events.
   */
  private async scrollTo(heading: string): Promise<void> {
    // In the container that scrolls the page, and down only: scrollIntoView also slid the page
    // sideways under the navigation (the event table is wider than the window), and a mouse wheel
    // scrolls whatever box is under the pointer, such as the run's input.
    const shortOfPx = await this.page
      .getByRole('heading', { name: heading })
      .first()
      .evaluate((element, topBarPx) => {
        const window = element.ownerDocument.defaultView!;
        const down = element.getBoundingClientRect().top - topBarPx;
        for (let box = element.parentElement; box; box = box.parentElement) {
          if (box.scrollHeight > box.clientHeight && /auto|scroll/.test(window.getComputedStyle(box).overflowY)) {
            const room = box.scrollHeight - box.clientHeight - box.scrollTop;
            if (room < down) return down;
            box.scrollTop += down;
            return 0;
          }
        }
        return down;
      }, TOP_BAR_PX);
    if (shortOfPx === 0) return;
    // As tall as what the page shows, up to TALLEST_PX; no blank band below it.
    await this.page.setViewportSize({ width: VIEWPORT.width, height: TALLEST_PX });
    // The bottom of the section under the heading: its first ancestor that reaches below it.
    const bottom = await this.page
      .getByRole('heading', { name: heading })
      .first()
      .evaluate((element) => {
        const below = element.getBoundingClientRect().bottom + 50;
        for (let box = element.parentElement; box; box = box.parentElement) {
          if (box.getBoundingClientRect().bottom > below) return box.getBoundingClientRect().bottom;
        }
        return below;
      });
    await this.page.setViewportSize({
      width: VIEWPORT.width,
      height: Math.round(Math.min(TALLEST_PX, Math.max(VIEWPORT.height, bottom + MARGIN_PX))),
    });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `[capture] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    if (started.stack) process.stderr.write(`[capture] logs kept in ${started.stack.runDir}\n`);
    void stopAndExit(1);
  },
);
