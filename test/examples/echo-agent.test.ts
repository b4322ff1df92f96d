import type http from 'node:http';
import { freePort } from '../../src/util/ports';
import { signWebhook } from '../../src/agent-calls/webhook-signature';
import { startEchoAgent } from '../../examples/echo-agent';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call } from '../support/http';
import { waitForTask, startTask } from '../support/tasks';
import { withTemporal } from '../support/temporal';
import { testStack } from '../support/test-stack';
import { closedStatus } from '../support/until';

/** examples/echo-agent.ts against the running service: both ways of answering, and a cancellation. */
describe('the example echo agent', () => {
  let agent: RegisteredAgent;
  let server: http.Server;
  let mcpUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    mcpUrl = `http://127.0.0.1:${port}/mcp`;
    agent = await registerAgent({
      mcpUrl,
      capabilities: {
        tools: [
          {
            name: 'echo',
            description: 'Echoes',
            inputSchema: {
              type: 'object',
              properties: { text: { type: 'string' }, laterMs: { type: 'integer' } },
              required: ['text'],
            },
          },
        ],
      },
    });
    server = await startEchoAgent({
      port,
      serviceUrl: testStack().baseUrl,
      apiKey: agent.apiKey,
      signingSecret: agent.signingSecret,
    });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const launch = async (params: Record<string, unknown>) => {
    return startTask({ agentId: agent.agentId, operation: 'tools/echo', params });
  };

  it('answers at once', async () => {
    expect(await waitForTask(await launch({ text: 'now' }))).toMatchObject({
      status: 'completed',
      result: { text: 'now' },
    });
  });

  it('answers 202 and reports later', async () => {
    const taskId = await launch({ text: 'later', laterMs: 500 });
    expect(
      await waitForTask(taskId, {
        until: (task) => task.phase === 'awaiting_agent_report' || task.status !== 'pending',
      }),
    ).toMatchObject({ phase: 'awaiting_agent_report' });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { text: 'later', after: 500 } });
  });

  it('stops work that is cancelled', async () => {
    // Its report would come long after the test: the cancellation comes first however slow the machine.
    const taskId = await launch({ text: 'never', laterMs: 10 * 60_000 });
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
    // The run ends once what it delivers after the task's end went out: the cancellation notice, which stops the work.
    expect(await withTemporal((client) => closedStatus(client.workflow.getHandle(`task-${taskId}`)))).toBe('COMPLETED');
    expect((await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body).toMatchObject({ status: 'cancelled' });
  });

  it('refuses a call with a bad or stale signature', async () => {
    const body = JSON.stringify({ taskId: 'x', operation: 'tools/echo', params: { text: 'forged' } });
    const send = async (secret: string, at = new Date()) =>
      (await fetch(mcpUrl, { method: 'POST', body, headers: { ...signWebhook(secret, 'x-1', body, at) } })).status;
    expect(await send(`whsec_${Buffer.alloc(32).toString('base64')}`)).toBe(401);
    expect(await send(agent.signingSecret, new Date(Date.now() - 10 * 60_000))).toBe(401);
    expect(await send(agent.signingSecret)).toBe(200);
  });
});
