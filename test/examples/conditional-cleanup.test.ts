import type http from 'node:http';
import { freePort } from '../../src/util/ports';
import { startConfirmingAgent } from '../../examples/confirming-agent';
import { startEchoAgent } from '../../examples/echo-agent';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call } from '../support/http';
import { createSchedule, deleteSchedule, untilRuns } from '../support/schedules';
import { waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';

/** An example agent registered with one tool, served on a free port by `start`. */
async function exampleAgent(
  tool: { name: string; description: string; inputSchema: Record<string, unknown> },
  start: (options: { port: number; serviceUrl: string; apiKey: string; signingSecret: string }) => Promise<http.Server>,
): Promise<{ agent: RegisteredAgent; server: http.Server }> {
  const port = await freePort();
  const agent = await registerAgent({ mcpUrl: `http://127.0.0.1:${port}/mcp`, capabilities: { tools: [tool] } });
  const server = await start({
    port,
    serviceUrl: testStack().baseUrl,
    apiKey: agent.apiKey,
    signingSecret: agent.signingSecret,
  });
  return { agent, server };
}

const pathSchema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const textSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

/** The composition with a condition of docs/tasks.md, run with examples/echo-agent.ts and examples/confirming-agent.ts. */
describe('the example of a condition, with the example agents', () => {
  const removed: string[] = [];
  let echo: RegisteredAgent;
  let confirming: RegisteredAgent;
  const servers: http.Server[] = [];

  beforeAll(async () => {
    const echoing = await exampleAgent(
      { name: 'echo', description: 'Echoes', inputSchema: textSchema },
      startEchoAgent,
    );
    const deleting = await exampleAgent(
      { name: 'delete', description: 'Deletes a path once a person confirms', inputSchema: pathSchema },
      (options) => startConfirmingAgent({ ...options, remove: (path) => removed.push(path) }),
    );
    [echo, confirming] = [echoing.agent, deleting.agent];
    servers.push(echoing.server, deleting.server);
  });
  afterAll(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));

  /** As docs/tasks.md shows it, with `text` as what the first task echoes. */
  const cleanup = (text: string) => [
    { agentId: echo.agentId, operation: 'tools/echo', params: { text } },
    {
      agentId: confirming.agentId,
      operation: 'tools/delete',
      parents: ['0'],
      params: { path: { source: { taskId: '0', field: 'text' } } },
      when: { source: { taskId: '0', field: 'text' }, schema: { type: 'string', pattern: '^/tmp/' } },
    },
    {
      agentId: echo.agentId,
      operation: 'tools/echo',
      parents: ['1'],
      runIfParentSkipped: true,
      params: { text: 'cleanup checked' },
    },
  ];
  const compose = async (text: string): Promise<string[]> => {
    const reply = await call('POST', '/tasks/compose', { apiKey: 'admin', body: cleanup(text) });
    expect(reply.status).toBe(202);
    return reply.body.map((element: { taskId: string }) => element.taskId);
  };

  it('skips the deletion of a path outside /tmp, and reports all the same', async () => {
    const [, deletion, report] = await compose('/home');
    expect(await waitForTask(deletion)).toMatchObject({
      status: 'skipped',
      skipReason: { code: 'CONDITION_NOT_MET' },
    });
    expect(await waitForTask(report)).toMatchObject({ status: 'completed', result: { text: 'cleanup checked' } });
    expect(removed).not.toContain('/home');
  });

  it('asks a person before it deletes a path in /tmp, then reports', async () => {
    const [, deletion, report] = await compose('/tmp/old-logs');
    expect(await waitForTask(deletion, { until: (task) => task.status !== 'pending' })).toMatchObject({
      status: 'input-required',
    });
    const answered = await call('POST', `/tasks/${deletion}/input`, {
      apiKey: 'admin',
      body: { input: { confirm: true } },
    });
    expect(answered.status).toBe(200);
    expect(await waitForTask(deletion)).toMatchObject({ status: 'completed', result: { deleted: '/tmp/old-logs' } });
    expect(await waitForTask(report)).toMatchObject({ status: 'completed', result: { text: 'cleanup checked' } });
    expect(removed).toEqual(['/tmp/old-logs']);
  });

  it('runs every morning at 7 as a schedule; a trigger runs it now', async () => {
    const { scheduleId } = await createSchedule({
      spec: { cron: '0 7 * * *', timezone: 'Europe/Oslo' },
      action: { composition: cleanup('/home') },
    });
    expect((await call('POST', `/schedules/${scheduleId}/trigger`, { apiKey: 'admin' })).status).toBe(202);
    const [run] = await untilRuns(scheduleId, 1);
    await deleteSchedule(scheduleId);
    const [, deletion, report] = run.taskIds!;
    expect(await waitForTask(deletion)).toMatchObject({ status: 'skipped' });
    expect(await waitForTask(report)).toMatchObject({ status: 'completed', result: { text: 'cleanup checked' } });
  });
});
