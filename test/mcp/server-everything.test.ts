import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { defaultPayloadConverter } from '@temporalio/common';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call } from '../support/http';
import { useServerEverything } from '../support/server-everything';
import { waitForTask } from '../support/tasks';
import { useTemporalClient } from '../support/temporal';
import { closedStatus, until } from '../support/until';

const DOCS = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/docs');

/** The tools the server offers a client that declares form and URL elicitation and nothing else, as the service's does (no roots, sampling, tasks). */
const TOOLS = [
  'echo',
  'get-annotated-message',
  'get-env',
  'get-resource-links',
  'get-resource-reference',
  'get-structured-content',
  'get-sum',
  'get-tiny-image',
  'gzip-file-as-resource',
  'toggle-simulated-logging',
  'toggle-subscriber-updates',
  'trigger-long-running-operation',
  'trigger-elicitation-request',
  'trigger-url-elicitation',
  'simulate-research-query',
];
const PROMPTS = ['simple-prompt', 'args-prompt', 'completable-prompt', 'resource-prompt'];
const TERMINAL = ['completed', 'failed', 'cancelled'];

const names = (entries: Array<{ name: string }>) => entries.map((entry) => entry.name);
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

/**
 * The service against `@modelcontextprotocol/server-everything`, the MCP reference server, in
 * Streamable HTTP mode on loopback: capability import, tools, resources, prompts, an MCP task
 * polled by the workflow, and progress notifications, all through the service's HTTP API.
 */
describe('server-everything as an MCP agent', () => {
  const everything = useServerEverything();
  const temporal = useTemporalClient();
  let agent: RegisteredAgent;

  beforeAll(async () => {
    agent = await registerAgent({ protocol: 'mcp', mcpUrl: everything().url, capabilities: undefined });
  });

  async function run(operation: string, params: Record<string, unknown> = {}): Promise<string> {
    const reply = await call('POST', '/tasks', {
      apiKey: 'admin',
      body: { agentId: agent.agentId, operation, params },
    });
    expect({ status: reply.status, body: reply.body }).toMatchObject({ status: 202, body: { status: 'pending' } });
    return reply.body.taskId as string;
  }

  /** Every view of the task GET /tasks/{id} showed until it ended (polled every 100 ms), the last one its end. */
  async function watch(taskId: string): Promise<any[]> {
    const views: any[] = [];
    await waitForTask(taskId, {
      until: (task) => {
        views.push(task);
        return TERMINAL.includes(task.status);
      },
    });
    return views;
  }

  /** The first page of each of the server's lists, read with the SDK's client as any MCP client reads them. */
  async function listed() {
    // The service's capabilities, so the server lists what it lists the service.
    const client = new Client(
      { name: 'server-everything-test', version: '1' },
      { capabilities: { elicitation: { form: {}, url: {} } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(everything().url)));
    try {
      const tools = await client.listTools();
      const resources = await client.listResources();
      const prompts = await client.listPrompts();
      return { tools, resources, prompts };
    } finally {
      await client.close();
    }
  }

  describe('registration without capabilities', () => {
    it('imports every tool, resource and prompt the server lists, with no warnings', async () => {
      expect(agent).toMatchObject({ protocol: 'mcp', status: 'active', version: 1 });
      expect(agent.warnings).toEqual([]);
      expect(names(agent.capabilities.tools)).toEqual(TOOLS);
      expect(names(agent.capabilities.resources)).toEqual(
        fs
          .readdirSync(DOCS)
          .filter((name) => fs.statSync(path.join(DOCS, name)).isFile())
          .sort(),
      );
      expect(names(agent.capabilities.prompts)).toEqual(PROMPTS);
      expect(agent.capabilities).not.toHaveProperty('experimental');
    });

    it('takes each list from one page, as the server sends them (it does not page), and imports all of each', async () => {
      const { tools, resources, prompts } = await listed();
      for (const list of [tools, resources, prompts]) expect(list.nextCursor).toBeUndefined();
      expect(names(tools.tools)).toEqual(TOOLS);
      expect(resources.resources.map(({ name, uri }) => ({ name, uri }))).toEqual(
        agent.capabilities.resources.map(({ name, uri }: { name: string; uri: string }) => ({ name, uri })),
      );
      expect(names(prompts.prompts)).toEqual(PROMPTS);
    });

    it("keeps a tool's contract as the server sends it: inputSchema, title, annotations, execution", () => {
      const tool = (name: string) => agent.capabilities.tools.find((entry: { name: string }) => entry.name === name);
      expect(tool('get-sum')).toEqual({
        name: 'get-sum',
        description: 'Returns the sum of two numbers',
        title: 'Get Sum Tool',
        inputSchema: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: {
            a: { type: 'number', description: 'First number' },
            b: { type: 'number', description: 'Second number' },
          },
          required: ['a', 'b'],
        },
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        execution: { taskSupport: 'forbidden' },
      });
      expect(tool('get-structured-content').outputSchema).toMatchObject({
        type: 'object',
        required: ['temperature', 'conditions', 'humidity'],
      });
      expect(tool('simulate-research-query').execution).toEqual({ taskSupport: 'required' });
    });

    it('names each resource by name and uri, and gives each prompt an inputSchema made of its arguments', () => {
      expect(agent.capabilities.resources).toContainEqual({
        name: 'features.md',
        description: 'Static document file exposed from /docs: features.md',
        uri: 'demo://resource/static/document/features.md',
      });
      const prompt = (name: string) =>
        agent.capabilities.prompts.find((entry: { name: string }) => entry.name === name);
      expect(prompt('simple-prompt')).toEqual({
        name: 'simple-prompt',
        description: 'A prompt with no arguments',
        inputSchema: { type: 'object', properties: {}, required: [], additionalProperties: false },
      });
      expect(prompt('args-prompt')).toEqual({
        name: 'args-prompt',
        description: 'A prompt with two arguments, one required and one optional',
        inputSchema: {
          type: 'object',
          // The server sends no description for `state`: it describes the string inside .optional().
          properties: { city: { type: 'string', description: 'Name of the city' }, state: { type: 'string' } },
          required: ['city'],
          additionalProperties: false,
        },
      });
    });

    it('reads the same capabilities again on refresh, and keeps the version', async () => {
      const reply = await call('POST', `/agents/${agent.agentId}/capabilities/refresh`, { apiKey: 'admin' });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ agentId: agent.agentId, version: 1, warnings: [] });
      expect(reply.body.capabilities).toEqual(agent.capabilities);
    });
  });

  describe('tools', () => {
    it('runs tools/echo and answers its text content', async () => {
      const task = await waitForTask(await run('tools/echo', { message: 'hello everything' }));
      expect(task).toMatchObject({ status: 'completed', attempts: 1, operation: 'tools/echo' });
      expect(task.result).toEqual(text('Echo: hello everything'));
    });

    it('runs tools/get-sum and answers its text content', async () => {
      const task = await waitForTask(await run('tools/get-sum', { a: 2, b: 3 }));
      expect(task).toMatchObject({ status: 'completed', attempts: 1 });
      expect(task.result).toEqual(text('The sum of 2 and 3 is 5.'));
    });

    it('answers tools/get-structured-content with its structured content', async () => {
      const task = await waitForTask(await run('tools/get-structured-content', { location: 'New York' }));
      expect(task).toMatchObject({ status: 'completed', attempts: 1 });
      expect(task.result).toEqual({ temperature: 33, conditions: 'Cloudy', humidity: 82 });
    });

    it('refuses params outside an imported inputSchema before calling the server', async () => {
      const reply = await call('POST', '/tasks', {
        apiKey: 'admin',
        body: { agentId: agent.agentId, operation: 'tools/get-structured-content', params: { location: 'Paris' } },
      });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ path: '/location', message: 'must be equal to one of the allowed values' }],
      });
    });
  });

  describe('compositions', () => {
    async function compose(body: unknown[]): Promise<string[]> {
      const reply = await call('POST', '/tasks/compose', { apiKey: 'admin', body });
      expect(reply.status).toBe(202);
      return reply.body.map((element: { taskId: string }) => element.taskId);
    }
    const tool = (operation: string, params: Record<string, unknown>, parents?: string[]) => ({
      agentId: agent.agentId,
      operation,
      params,
      ...(parents ? { parents } : {}),
    });

    it("feeds a structured result's field into echo's message", async () => {
      const taskIds = await compose([
        tool('tools/get-structured-content', { location: 'Chicago' }),
        tool('tools/echo', { message: { source: { taskId: '0', field: 'conditions' }, type: 'string' } }, ['0']),
      ]);
      const [weather, echo] = await Promise.all(taskIds.map((taskId) => waitForTask(taskId)));
      expect(weather).toMatchObject({ status: 'completed' });
      expect(echo).toMatchObject({ status: 'completed', result: text('Echo: Light rain / drizzle') });
    });

    // get-sum answers text content only: a JSON Pointer field reaches into it.
    it("feeds get-sum's text into echo's message through a JSON Pointer field", async () => {
      const taskIds = await compose([
        tool('tools/get-sum', { a: 20, b: 22 }),
        tool('tools/echo', { message: { source: { taskId: '0', field: '/content/0/text' }, type: 'string' } }, ['0']),
        tool('tools/echo', { message: { source: { taskId: '0', field: 'content' }, type: 'string' } }, ['0']),
      ]);
      const [sum, echo, wholeContent] = await Promise.all(taskIds.map((taskId) => waitForTask(taskId)));
      expect(sum).toMatchObject({ status: 'completed', result: text('The sum of 20 and 22 is 42.') });
      expect(echo).toMatchObject({ status: 'completed', result: text('Echo: The sum of 20 and 22 is 42.') });
      expect(wholeContent).toMatchObject({
        status: 'failed',
        error: { code: 'TYPE_MISMATCH', details: { expected: 'string', actual: 'array' } },
      });
    });
  });

  describe('resources and prompts', () => {
    const features = {
      contents: [
        {
          uri: 'demo://resource/static/document/features.md',
          mimeType: 'text/markdown',
          text: fs.readFileSync(path.join(DOCS, 'features.md'), 'utf8'),
        },
      ],
    };

    it('reads a resource named by its name', async () => {
      const task = await waitForTask(await run('resources/features.md'));
      expect(task).toMatchObject({ status: 'completed', attempts: 1 });
      expect(task.result).toEqual(features);
    });

    it('reads a resource named by its uri', async () => {
      const task = await waitForTask(await run('resources/demo://resource/static/document/features.md'));
      expect(task).toMatchObject({ status: 'completed', attempts: 1 });
      expect(task.result).toEqual(features);
    });

    it('gets a prompt without arguments', async () => {
      const task = await waitForTask(await run('prompts/simple-prompt'));
      expect(task).toMatchObject({ status: 'completed', attempts: 1 });
      expect(task.result).toEqual({
        messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt without arguments.' } }],
      });
    });

    it('gets a prompt with its arguments', async () => {
      const task = await waitForTask(await run('prompts/args-prompt', { city: 'Lyon', state: 'Rhône' }));
      expect(task).toMatchObject({ status: 'completed', attempts: 1 });
      expect(task.result).toEqual({
        messages: [{ role: 'user', content: { type: 'text', text: "What's weather in Lyon, Rhône?" } }],
      });
    });

    it("refuses a prompt's arguments outside the inputSchema made of them", async () => {
      const reply = await call('POST', '/tasks', {
        apiKey: 'admin',
        body: { agentId: agent.agentId, operation: 'prompts/args-prompt', params: { state: 'Rhône' } },
      });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ path: '/', message: "must have required property 'city'" }],
      });
    });
  });

  describe('long work', () => {
    /** The Temporal history of a task's workflow. */
    const historyOf = async (taskId: string) =>
      (await temporal().workflow.getHandle(`task-${taskId}`).fetchHistory()).events ?? [];

    /** The MCP task the call created, as the call activity answered it to the workflow (`mcpTask`). */
    async function mcpTaskOf(taskId: string): Promise<{ mcpTaskId: string; sessionId: string }> {
      return until(async () => {
        for (const event of await historyOf(taskId)) {
          const payload = event.activityTaskCompletedEventAttributes?.result?.payloads?.[0];
          const answer = payload && defaultPayloadConverter.fromPayload<{ kind: string; handle?: any }>(payload);
          if (answer?.kind === 'mcpTask') return answer.handle;
        }
        return undefined;
      }, `task ${taskId} handed over to an MCP task`);
    }

    /** The HTTP status server-everything answers a ping in the session: 200 while it lives, 400 once it ended. */
    async function pingIn(sessionId: string): Promise<number> {
      const response = await fetch(everything().url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionId,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      await response.body?.cancel();
      return response.status;
    }

    it('runs simulate-research-query as an MCP task, polled until its report, its status messages shown meanwhile', async () => {
      const taskId = await run('tools/simulate-research-query', { topic: 'tides' });
      const { sessionId } = await mcpTaskOf(taskId);
      // The session that created the MCP task stays open for the polls.
      expect(await pingIn(sessionId)).toBe(200);
      const views = await watch(taskId);
      const ended = views[views.length - 1];
      expect(ended).toMatchObject({ status: 'completed' });
      expect(ended.result.content).toHaveLength(1);
      const report: string = ended.result.content[0].text;
      expect(report.startsWith('# Research Report: tides\n')).toBe(true);
      for (const stage of ['Gathering sources', 'Analyzing content', 'Synthesizing findings', 'Generating report'])
        expect(report).toContain(`${stage} ✓`);

      const stages = [
        'Gathering sources...',
        'Analyzing content...',
        'Synthesizing findings...',
        'Generating report...',
      ];
      const messages = views.filter((view) => view.status === 'pending' && view.message).map((view) => view.message);
      expect(messages.length).toBeGreaterThan(0);
      for (const message of messages) expect(stages).toContain(message);

      const events = await historyOf(taskId);
      const scheduled = events.flatMap((event) => {
        const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
        return name ? [name] : [];
      });
      // One call that creates the MCP task, then polls (tasks/get, and tasks/result in the last) between timers.
      expect(scheduled.filter((name) => name === 'callAgent')).toHaveLength(1);
      const polls = scheduled.filter((name) => name === 'pollMcpTask').length;
      expect(polls).toBeGreaterThanOrEqual(2);
      expect(events.filter((event) => event.timerStartedEventAttributes).length).toBeGreaterThanOrEqual(polls);
      // The last poll took the result and ended the session.
      expect(await pingIn(sessionId)).toBe(400);
    });

    it('cancels the MCP task at the server when the task is cancelled, and ends its session', async () => {
      const taskId = await run('tools/simulate-research-query', { topic: 'cancelled research' });
      const { sessionId } = await mcpTaskOf(taskId);
      expect(await pingIn(sessionId)).toBe(200);
      const cancel = await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' });
      expect(cancel.status).toBe(200);
      expect(await waitForTask(taskId)).toMatchObject({ status: 'cancelled' });
      expect(await closedStatus(temporal().workflow.getHandle(`task-${taskId}`))).toBe('COMPLETED');
      const events = await historyOf(taskId);
      const notified = events.find(
        (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'notifyCancellation',
      );
      expect(notified).toBeDefined();
      expect(
        events.some(
          (event) =>
            event.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === notified!.eventId?.toString(),
        ),
      ).toBe(true);
      expect(await pingIn(sessionId)).toBe(400);
    });

    it('asks for the input of trigger-elicitation-request as the task input-required, and gives the server the answer checked against its schema', async () => {
      const taskId = await run('tools/trigger-elicitation-request');
      const waiting = await waitForTask(taskId, {
        until: (task) => task.status === 'input-required',
      });
      expect(waiting.inputRequest).toMatchObject({
        message: 'Please provide inputs for the following fields:',
        inputSchema: { type: 'object', required: ['name'] },
      });
      const refused = await call('POST', `/tasks/${taskId}/input`, {
        apiKey: 'admin',
        body: { input: { check: true } },
      });
      expect(refused.status).toBe(400);
      const answered = await call('POST', `/tasks/${taskId}/input`, {
        apiKey: 'admin',
        body: { input: { name: 'Ada Lovelace', check: true, integer: 7 } },
      });
      expect(answered.status).toBe(200);
      const ended = await waitForTask(taskId);
      expect(ended.status).toBe('completed');
      const texts = (ended.result.content as Array<{ text: string }>).map((part) => part.text).join('\n');
      expect(texts).toContain('User provided the requested information');
      expect(texts).toContain('- Name: Ada Lovelace');
      expect(texts).toContain('- Favorite Integer: 7');
    });

    it('relays trigger-url-elicitation as an input request with its url, and gives the server the action the person chose', async () => {
      const url = 'https://consent.example/authorize?state=1';
      const taskId = await run('tools/trigger-url-elicitation', { url, message: 'Open the consent page' });
      const waiting = await waitForTask(taskId, { until: (task) => task.status === 'input-required' });
      expect(waiting.inputRequest).toMatchObject({ message: 'Open the consent page', url });
      const answered = await call('POST', `/tasks/${taskId}/input`, {
        apiKey: 'admin',
        body: { input: { action: 'decline' } },
      });
      expect(answered.status).toBe(200);
      const ended = await waitForTask(taskId);
      expect(ended.status).toBe('completed');
      expect((ended.result.content as Array<{ text: string }>)[0].text).toContain('User declined to open the URL');
    });

    it('shows trigger-long-running-operation progress notifications as the task progress while it runs, then its result', async () => {
      // A step a second: three seconds in which to see it running with its progress, however slow the machine.
      const taskId = await run('tools/trigger-long-running-operation', { duration: 4, steps: 4 });
      const views: any[] = [];
      await waitForTask(taskId, {
        until: (task) => {
          views.push(task);
          return task.progress !== undefined || task.status !== 'pending';
        },
      });
      const running = views.filter((view) => view.progress !== undefined);
      expect(running.length).toBeGreaterThan(0);
      for (const view of running) expect(view).toMatchObject({ status: 'pending', phase: 'calling_agent' });
      for (const view of running) expect([0.25, 0.5, 0.75]).toContain(view.progress);
      expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { content: expect.any(Array) } });
    });
  });
});
