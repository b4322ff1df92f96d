import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { freePort } from '../../src/util/ports';
import { startMcpAgent } from '../../examples/mcp-agent';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call } from '../support/http';
import { waitForTask, startTask } from '../support/tasks';

/** examples/mcp-agent.ts against the running service: registered without capabilities, called over MCP. */
describe('the example MCP agent', () => {
  const token = randomBytes(24).toString('base64url');
  let agent: RegisteredAgent;
  let server: http.Server;
  let mcpUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    mcpUrl = `http://127.0.0.1:${port}/mcp`;
    server = await startMcpAgent({ port, token });
    agent = await registerAgent({
      protocol: 'mcp',
      mcpUrl,
      capabilities: undefined,
      headers: { Authorization: `Bearer ${token}` },
    });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const launch = async (operation: string, params: Record<string, unknown>) => {
    return startTask({ agentId: agent.agentId, operation, params });
  };

  it('registers with the tools read from the agent, and the header by name only', () => {
    expect(agent).toMatchObject({ protocol: 'mcp', warnings: [], headerNames: ['Authorization'] });
    expect(agent.capabilities.tools.map((tool: { name: string }) => tool.name)).toEqual(['echo', 'countdown']);
    expect(JSON.stringify(agent)).not.toContain(token);
  });

  it('answers tools/echo with its structured content', async () => {
    const task = await waitForTask(await launch('tools/echo', { text: 'hello over MCP' }));
    expect(task).toMatchObject({ status: 'completed', attempts: 1, result: { text: 'hello over MCP' } });
  });

  it('shows the progress of tools/countdown while it runs', async () => {
    // Long enough to be seen running however slow the machine; its end is the next test's subject.
    const taskId = await launch('tools/countdown', { seconds: 10 });
    const running = await waitForTask(taskId, {
      until: (task) => task.progress !== undefined || task.status !== 'pending',
    });
    expect(running).toMatchObject({
      status: 'pending',
      phase: 'calling_agent',
      message: expect.stringMatching(/^\d s left$/),
    });
    expect(running.progress).toBe((10 - Number(running.message[0])) / 10);
    expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
  });

  // Fails while activities/call-agent.ts writes a progress notification's change without waiting
  // for it before it records the answer: on FerretDB a findOneAndUpdate is a read-modify-write, so
  // the progress write, begun on the task still pending, lands after the outcome and puts the task
  // back to pending without its result, for good (the workflow has ended, trusting the record).
  it('ends every task whose last progress notification comes just before the result', async () => {
    const taskIds = await Promise.all(Array.from({ length: 16 }, () => launch('tools/countdown', { seconds: 1 })));
    const tasks = await Promise.all(taskIds.map((taskId) => waitForTask(taskId)));
    expect(tasks.map(({ status, result }) => ({ status, result }))).toEqual(
      taskIds.map(() => ({ status: 'completed', result: { counted: 1 } })),
    );
  });

  it('refuses params outside the tool inputSchema before calling the agent', async () => {
    const reply = await call('POST', '/tasks', {
      apiKey: 'admin',
      body: { agentId: agent.agentId, operation: 'tools/countdown', params: { seconds: 0 } },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('answers 401 to a request without the token', async () => {
    const response = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
  });
});
