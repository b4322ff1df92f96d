import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { useMcpServer } from '../support/mcp-server';
import { startTask, waitForTask } from '../support/tasks';
import { until } from '../support/until';
import { gate } from '../support/gate';

/** Fast retries so the retry paths end within a test. */
const QUICK_RETRY = { maxAttempts: 3, initialIntervalMs: 100, backoffCoefficient: 1, maxIntervalMs: 100 };

function tools(server: McpServer): void {
  server.registerTool(
    'weather',
    {
      description: 'The weather in a city, as structured content',
      inputSchema: { city: z.string() },
      outputSchema: { city: z.string(), celsius: z.number() },
    },
    ({ city }) => ({
      content: [{ type: 'text', text: `${city}: 21 °C` }],
      structuredContent: { city, celsius: 21 },
    }),
  );
  server.registerTool('greet', { description: 'Greets', inputSchema: { name: z.string() } }, ({ name }) => ({
    content: [{ type: 'text', text: `Hello, ${name}!` }],
  }));
  server.registerTool('refuse', { description: 'Always fails', inputSchema: {} }, () => ({
    isError: true,
    content: [{ type: 'text', text: 'No such city on file' }],
  }));
  server.registerTool('flaky', { description: 'Fails at the HTTP level first', inputSchema: {} }, () => ({
    content: [{ type: 'text', text: 'made it' }],
  }));
  server.registerTool('huge', { description: 'Answers more than MAX_BODY_BYTES', inputSchema: {} }, () => ({
    content: [{ type: 'text', text: 'x'.repeat(1_200_000) }],
  }));
  server.registerResource(
    'motd',
    'memo://motd',
    { description: 'Message of the day', mimeType: 'text/plain' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Stay curious' }] }),
  );
  server.registerPrompt(
    'review',
    { description: 'Asks for a review', argsSchema: { file: z.string(), tone: z.string().optional() } },
    ({ file, tone }) => ({
      description: 'A review request',
      messages: [
        { role: 'user', content: { type: 'text', text: `Review ${file}${tone ? ` in a ${tone} tone` : ''}` } },
      ],
    }),
  );
  // Three steps of progress, then the last one waits for the test: `slow` until it lets it end,
  // `stuck` until the call is cancelled.
  const progressThen =
    (lastStep: (signal: AbortSignal) => Promise<unknown>) =>
    async (_args: unknown, extra: RequestHandlerExtra<ServerRequest, ServerNotification>) => {
      const token = extra._meta?.progressToken;
      for (let step = 1; step <= 3; step += 1) {
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: step, total: 4, message: `step ${step} of 4` },
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      await lastStep(extra.signal);
      return { content: [{ type: 'text' as const, text: 'slow done' }] };
    };
  server.registerTool(
    'slow',
    { description: 'Reports its progress', inputSchema: {} },
    progressThen(() => slowCallsMayEnd.opened),
  );
  server.registerTool(
    'stuck',
    { description: 'Reports its progress, then runs until cancelled', inputSchema: {} },
    progressThen((signal) => new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))),
  );
}

/** Lets the calls of `slow` end, once the test saw their progress. */
const slowCallsMayEnd = gate();

describe('tasks on an MCP agent, called over MCP', () => {
  const mcp = useMcpServer({ setup: tools });
  let agent: RegisteredAgent;

  beforeAll(async () => {
    agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
  });

  const run = (operation: string, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
    startTask({ agentId: agent.agentId, operation, params, ...extra });

  it('registers with its tools read from the server, and shows protocol mcp', async () => {
    expect(agent.protocol).toBe('mcp');
    expect(agent.warnings).toEqual([]);
    expect(agent.capabilities.tools.map((tool: { name: string }) => tool.name).sort()).toEqual([
      'flaky',
      'greet',
      'huge',
      'refuse',
      'slow',
      'stuck',
      'weather',
    ]);
    const weather = agent.capabilities.tools.find((tool: { name: string }) => tool.name === 'weather');
    expect(weather.inputSchema).toMatchObject({ type: 'object', properties: { city: { type: 'string' } } });
    expect(weather.outputSchema).toMatchObject({ properties: { celsius: { type: 'number' } } });
  });

  it('answers a tool with structured content with that content as the result', async () => {
    const task = await waitForTask(await run('tools/weather', { city: 'Lyon' }));
    expect(task).toMatchObject({ status: 'completed', result: { city: 'Lyon', celsius: 21 }, attempts: 1 });
    const [called] = mcp()
      .callsOf('tools/call')
      .filter((request) => request.toolName === 'weather');
    expect(called).toBeDefined();
  });

  it("makes an agent's plain calls in one kept session, side by side, until its version changes", async () => {
    await waitForTask(await run('tools/greet', { name: 'first' }));
    const initialised = mcp().callsOf('initialize').length;
    const tasks = await Promise.all(['a', 'b', 'c'].map((name) => run('tools/greet', { name })));
    for (const taskId of tasks) expect((await waitForTask(taskId)).status).toBe('completed');
    expect(mcp().callsOf('initialize')).toHaveLength(initialised);
    const sessions = new Set(
      mcp()
        .callsOf('tools/call')
        .slice(-3)
        .map((request) => request.headers['mcp-session-id']),
    );
    expect(sessions.size).toBe(1);
    // Each request of the shared session names the task it was made for.
    const lineages = mcp()
      .callsOf('tools/call')
      .slice(-3)
      .map((request) => request.headers['acs-task-lineage']);
    expect(lineages.sort()).toEqual(tasks.map((taskId) => `parent=${taskId}; root=${taskId}; hops=0`).sort());

    const patched = await call('PATCH', `/agents/${agent.agentId}`, { apiKey: 'admin', body: { description: 'v2' } });
    expect(patched.status).toBe(200);
    agent = { ...agent, version: patched.body.version };
    await waitForTask(await run('tools/greet', { name: 'after the change' }));
    expect(mcp().callsOf('initialize')).toHaveLength(initialised + 1);
  });

  it('answers a tool without structured content with {content}', async () => {
    const task = await waitForTask(await run('tools/greet', { name: 'Ada' }));
    expect(task).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Hello, Ada!' }] },
    });
  });

  it("checks a composition's reads of structured content against the tool's outputSchema before anything starts", async () => {
    const greetWith = (field: string) => [
      { agentId: agent.agentId, operation: 'tools/weather', params: { city: 'Oslo' } },
      {
        agentId: agent.agentId,
        operation: 'tools/greet',
        params: { name: { source: { taskId: '0', field } } },
        parents: ['0'],
      },
    ];
    const calls = mcp().callsOf('tools/call').length;
    const refused = await call('POST', '/tasks/compose', { apiKey: 'admin', body: greetWith('celsius') });
    expect(expectError(refused, 400, 'INVALID_COMPOSITION').details).toMatchObject({
      mismatch: 'type',
      fieldTypes: ['number'],
      paramTypes: ['string'],
      outputSchemaPointer: '/properties/celsius',
      inputSchemaPointer: '/properties/name',
    });
    expect(mcp().callsOf('tools/call')).toHaveLength(calls);

    const accepted = await call('POST', '/tasks/compose', { apiKey: 'admin', body: greetWith('city') });
    expect(accepted.status).toBe(202);
    expect(await waitForTask(accepted.body[1].taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Hello, Oslo!' }] },
    });
  });

  it('fails the task with AGENT_TOOL_ERROR and the text as message when the tool answers isError', async () => {
    const task = await waitForTask(await run('tools/refuse', {}, { retry: QUICK_RETRY }));
    expect(task).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'AGENT_TOOL_ERROR', message: 'No such city on file' },
    });
  });

  it('retries HTTP 503 answers with the task retry policy, and completes on the third attempt', async () => {
    mcp().failNext('flaky', 2, 503);
    const task = await waitForTask(await run('tools/flaky', {}, { retry: QUICK_RETRY }));
    expect(task).toMatchObject({
      status: 'completed',
      attempts: 3,
      result: { content: [{ type: 'text', text: 'made it' }] },
    });
    expect(task.attemptErrors).toHaveLength(2);
    expect(task.attemptErrors[0].message).toMatch(/503/);
  });

  it('shows progress notifications as the task progress and message while the tool runs', async () => {
    const taskId = await run('tools/slow');
    const running = await waitForTask(taskId, {
      until: (task) => task.progress !== undefined || task.status !== 'pending',
    });
    expect(running).toMatchObject({ status: 'pending' });
    expect(running.progress).toBeGreaterThan(0);
    expect(running.progress).toBeLessThan(1);
    expect(running.message).toMatch(/^step \d of 4$/);
    slowCallsMayEnd.open();
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'slow done' }] },
    });
  });

  it('imports resources with their uri and prompts with an inputSchema of their arguments', () => {
    expect(agent.capabilities.resources).toEqual([
      { name: 'motd', description: 'Message of the day', uri: 'memo://motd' },
    ]);
    expect(agent.capabilities.prompts).toEqual([
      {
        name: 'review',
        description: 'Asks for a review',
        inputSchema: {
          type: 'object',
          properties: { file: { type: 'string' }, tone: { type: 'string' } },
          required: ['file'],
          additionalProperties: false,
        },
      },
    ]);
  });

  it('reads a resource named by its name or its uri, and gets a prompt with the params as arguments', async () => {
    const contents = [{ uri: 'memo://motd', mimeType: 'text/plain', text: 'Stay curious' }];
    expect(await waitForTask(await run('resources/motd'))).toMatchObject({ status: 'completed', result: { contents } });
    expect(await waitForTask(await run('resources/memo://motd'))).toMatchObject({
      status: 'completed',
      result: { contents },
    });
    expect(await waitForTask(await run('prompts/review', { file: 'main.ts', tone: 'kind' }))).toMatchObject({
      status: 'completed',
      result: {
        description: 'A review request',
        messages: [{ role: 'user', content: { type: 'text', text: 'Review main.ts in a kind tone' } }],
      },
    });
  });

  it("fails with the SDK server's own answer to an unknown tool, an isError result", async () => {
    const ghost = await registerAgent({
      protocol: 'mcp',
      mcpUrl: mcp().url,
      capabilities: { tools: [{ name: 'ghost', description: 'not on the server', inputSchema: { type: 'object' } }] },
    });
    const taskId = await startTask({
      agentId: ghost.agentId,
      operation: 'tools/ghost',
      params: {},
      retry: QUICK_RETRY,
    });
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'AGENT_TOOL_ERROR', message: 'MCP error -32602: Tool ghost not found' },
    });
  });

  it('fails with AGENT_PROTOCOL_ERROR, without retrying, when the answer is longer than MAX_BODY_BYTES', async () => {
    const task = await waitForTask(await run('tools/huge', {}, { retry: QUICK_RETRY }));
    expect(task).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'AGENT_PROTOCOL_ERROR' } });
    expect(task.error.message).toMatch(/MAX_BODY_BYTES/);
  });

  it('cancels a call in flight as a cancellation, not a failed attempt, and tells the server', async () => {
    const taskId = await run('tools/stuck');
    await waitForTask(taskId, { until: (task) => task.progress !== undefined });
    expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
    const ended = await waitForTask(taskId);
    expect(ended.status).toBe('cancelled');
    expect(ended.attemptErrors).toBeUndefined();
    await until(() => mcp().callsOf('notifications/cancelled').length > 0, 'notifications/cancelled at the server');
  });

  it('refuses an experimental operation on an MCP agent with 400, MCP having none', async () => {
    const experimental = await registerAgent({
      protocol: 'mcp',
      mcpUrl: mcp().url,
      capabilities: { tools: [], experimental: [{ name: 'beta' }] },
    });
    const reply = await call('POST', '/tasks', {
      apiKey: 'admin',
      body: { agentId: experimental.agentId, operation: 'experimental/beta', params: {} },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('OPERATION_NOT_SUPPORTED');
  });

  it('refuses params that break an imported inputSchema before any call', async () => {
    const before = mcp().callsOf('tools/call').length;
    const reply = await call('POST', '/tasks', {
      apiKey: 'admin',
      body: { agentId: agent.agentId, operation: 'tools/weather', params: { city: 7 } },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('VALIDATION_ERROR');
    expect(mcp().callsOf('tools/call')).toHaveLength(before);
  });
});
