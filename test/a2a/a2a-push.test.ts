import { useA2aAgent } from '../support/a2a-agent';
import { testStack } from '../support/test-stack';
import { registerAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { startTask, waitForTask } from '../support/tasks';
import { until } from '../support/until';
import { a2aPushConfig } from '../../src/agent-calls/a2a-push';

describe('an A2A agent whose card offers push notifications', () => {
  const a2a = useA2aAgent({ slow: 'works-then-completes' }, { pushNotifications: true });
  const keys = () => [Buffer.from(testStack().secretsKey, 'base64')];
  const pushTo = (taskId: string, token: string) =>
    call('POST', `/a2a-push/${taskId}`, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/a2a+json' },
      body: { statusUpdate: { taskId, status: { state: 'TASK_STATE_COMPLETED' } } },
    });

  it('is asked to push its task’s updates, and each push has the task polled at once', async () => {
    const agent = await registerAgent({ protocol: 'a2a', mcpUrl: a2a().cardUrl, capabilities: undefined });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/slow', params: {} });
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    const a2aTaskId = await until(() => a2a().working.at(-1), 'the agent works on a task');
    a2a().finish(a2aTaskId);
    const done = await waitForTask(taskId);
    expect(done).toMatchObject({ status: 'completed', result: { finished: true }, attempts: 1 });
    // Every poll follows a push: none waited for a timer. The agent pushes each event of its task (an
    // artifact, then the completed status): a poll brought by the first may already find the task
    // completed, and the pushes after it bring no poll of a task that ended.
    const log = a2a().pollsAndPushes;
    expect(log[0]).toBe('push');
    expect(log).toContain('GetTask');
    log.forEach((_, end) => {
      const seen = log.slice(0, end + 1);
      expect(seen.filter((entry) => entry === 'GetTask').length).toBeLessThanOrEqual(
        seen.filter((entry) => entry === 'push').length,
      );
    });
  });

  it("refuses a push without the task's token (401), and one for a task that does not exist (404)", async () => {
    const agent = await registerAgent({ protocol: 'a2a', mcpUrl: a2a().cardUrl, capabilities: undefined });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/slow', params: {} });
    const otherTask = a2aPushConfig({ publicUrl: testStack().baseUrl, keys: keys() }, 'another-task');
    expectError(await pushTo(taskId, otherTask.authentication.credentials), 401, 'UNAUTHENTICATED');
    expectError(await call('POST', `/a2a-push/${taskId}`, { body: {} }), 401, 'UNAUTHENTICATED');
    const unknown = a2aPushConfig({ publicUrl: testStack().baseUrl, keys: keys() }, 'no-such-task');
    expect(unknown.url).toBe(`${testStack().baseUrl}/a2a-push/no-such-task`);
    expectError(await pushTo('no-such-task', unknown.authentication.credentials), 404, 'NOT_FOUND');
    const own = a2aPushConfig({ publicUrl: testStack().baseUrl, keys: keys() }, taskId);
    expect((await pushTo(taskId, own.authentication.credentials)).status).toBe(204);
    a2a().finish(await until(() => a2a().working.at(-1), 'the agent works on a task'));
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed' });
  });
});
