import fs from 'node:fs';
import path from 'node:path';
import { useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { startTask, waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { until } from '../support/until';

/** The JSON lines of the service under test that name `taskId`. */
function linesOf(taskId: string): Array<Record<string, unknown>> {
  return fs
    .readFileSync(path.join(testStack().runDir, 'service.log'), 'utf8')
    .split('\n')
    .filter((line) => line.includes(taskId))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("the service's log lines of a task", () => {
  const server = useAgentServer();

  it('carry its taskId, workflowId and agentId, from the API and from the activity that called the agent', async () => {
    let calls = 0;
    const agent = await registerAgent({
      mcpUrl: server().route('busy-once', () =>
        (calls += 1) === 1 ? { status: 503, body: 'busy' } : { status: 200, body: { status: 'completed', result: {} } },
      ),
    });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' } });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', attempts: 2 });

    const ids = { taskId, workflowId: `task-${taskId}`, agentId: agent.agentId };
    const lines = await until(() => {
      const found = linesOf(taskId);
      return found.some((line) => line.component === 'tasks') && found.some((line) => line.sdk === 'temporal') && found;
    }, "the task's lines from the API and from its activity");
    expect(lines.find((line) => line.component === 'tasks')).toMatchObject({ ...ids, msg: 'task started' });
    // The SDK logs the failed attempt of the activity (503), with the ids its arguments named.
    expect(lines.find((line) => line.sdk === 'temporal')).toMatchObject({ ...ids, activityType: 'callAgent' });
  });
});
