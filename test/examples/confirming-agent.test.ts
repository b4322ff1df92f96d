import type http from 'node:http';
import { freePort } from '../../src/util/ports';
import { CONFIRMATION_SCHEMA, startConfirmingAgent } from '../../examples/confirming-agent';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call } from '../support/http';
import { startTask, waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';

/** examples/confirming-agent.ts against the running service: it asks before it deletes, and keeps what a person says to keep. */
describe('the example confirming agent', () => {
  let agent: RegisteredAgent;
  let server: http.Server;
  const removed: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    agent = await registerAgent({
      mcpUrl: `http://127.0.0.1:${port}/mcp`,
      capabilities: {
        tools: [
          {
            name: 'delete',
            description: 'Deletes a path once a person confirms',
            inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          },
        ],
      },
    });
    server = await startConfirmingAgent({
      port,
      serviceUrl: testStack().baseUrl,
      apiKey: agent.apiKey,
      signingSecret: agent.signingSecret,
      remove: (path) => removed.push(path),
    });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const askedFor = async (path: string) => {
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/delete', params: { path } });
    const waiting = await waitForTask(taskId, { until: (task) => task.status !== 'pending' });
    expect(waiting).toMatchObject({
      status: 'input-required',
      inputRequest: { message: `Delete ${path}?`, inputSchema: CONFIRMATION_SCHEMA },
    });
    return taskId;
  };

  it('deletes once a person confirms', async () => {
    const taskId = await askedFor('/tmp/old-logs');
    expect(removed).toEqual([]);
    const answered = await call('POST', `/tasks/${taskId}/input`, {
      apiKey: 'admin',
      body: { input: { confirm: true } },
    });
    expect(answered.status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { deleted: '/tmp/old-logs' } });
    expect(removed).toEqual(['/tmp/old-logs']);
  });

  it('keeps it when the answer is no', async () => {
    const taskId = await askedFor('/home');
    expect(
      (await call('POST', `/tasks/${taskId}/input`, { apiKey: 'admin', body: { input: { confirm: false } } })).status,
    ).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'failed', error: { code: 'NOT_CONFIRMED' } });
    expect(removed).not.toContain('/home');
  });
});
