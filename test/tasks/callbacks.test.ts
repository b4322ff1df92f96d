import { useAgentServer, completes, signatureWith, type ReceivedCall, accepts } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { waitForTask, startTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { until } from '../support/until';

/** Completion callbacks to a task's callbackUrl and to its agent's registered callbackUrl. */
describe('completion callbacks', () => {
  const server = useAgentServer();

  const expectSigned = (received: ReceivedCall, secret: string) =>
    expect(received.headers['webhook-signature']).toBe(signatureWith(secret, received));

  it("posts the outcome to the task's and the agent's callbackUrl, each signed with its secret", async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('done', completes({ text: 'ok' })),
      callbackUrl: server().route('agent-hook', () => ({ status: 204 })),
    });
    const taskId = await startTask({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'x' },
      callbackUrl: server().route('task-hook', () => ({ status: 200, body: {} })),
    });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed' });

    const expected = {
      taskId,
      status: 'completed',
      result: { text: 'ok' },
      agentId: agent.agentId,
      operation: 'tools/echo',
      completedAt: expect.any(String),
    };
    const [toTask] = await callsTo('task-hook', taskId, 1);
    expect(toTask.body).toEqual(expected);
    expectSigned(toTask, testStack().callbackSigningSecret);
    const [toAgent] = await callsTo('agent-hook', taskId, 1);
    expect(toAgent.body).toEqual(expected);
    expectSigned(toAgent, agent.signingSecret);
    expect(Date.parse(toTask.body.completedAt)).not.toBeNaN();
  });

  it("retries a failing callback with the same webhook-id and never changes the task's outcome", async () => {
    let attempts = 0;
    const hook = server().route('flaky-hook', () =>
      (attempts += 1) <= 2 ? { status: 503, body: 'busy' } : { status: 200, body: {} },
    );
    const agent = await registerAgent({
      mcpUrl: server().route('fails', () => ({
        status: 200,
        body: { status: 'failed', error: { code: 'NOPE', message: 'no' } },
      })),
    });
    const taskId = await startTask({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'x' },
      callbackUrl: hook,
    });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'failed', error: { code: 'NOPE' } });
    const deliveries = await callsTo('flaky-hook', taskId, 3);
    expect(new Set(deliveries.map((received) => received.headers['webhook-id'])).size).toBe(1);
    expect(deliveries[2].body).toMatchObject({ status: 'failed', error: { code: 'NOPE', message: 'no' } });
    expect((await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body).toMatchObject({
      status: 'failed',
      error: { code: 'NOPE' },
    });
  });

  it('gives up on a callback refused with 410 after one try; the task stays completed', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('done-refused', completes({ text: 'ok' })) });
    const taskId = await startTask({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'x' },
      callbackUrl: server().route('gone-hook', () => ({ status: 410, body: 'gone' })),
    });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed' });
    await callsTo('gone-hook', taskId, 1);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(
      server()
        .callsTo('gone-hook')
        .filter((received) => received.body?.taskId === taskId),
    ).toHaveLength(1);
  });

  it('calls back with status cancelled for a cancelled task', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('accepts', accepts),
    });
    const taskId = await startTask({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'x' },
      callbackUrl: server().route('cancel-hook', () => ({ status: 200, body: {} })),
    });
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
    const [callback] = await callsTo('cancel-hook', taskId, 1);
    expect(callback.body).toEqual({
      taskId,
      status: 'cancelled',
      agentId: agent.agentId,
      operation: 'tools/echo',
      completedAt: expect.any(String),
    });
  });

  /** The calls to `route` about `taskId`, once there are `count` of them (at most 20 s). */
  async function callsTo(route: string, taskId: string, count: number): Promise<ReceivedCall[]> {
    const received = await until(() => {
      const matching = server()
        .callsTo(route)
        .filter((entry) => entry.body?.taskId === taskId);
      return matching.length >= count && matching;
    }, `${count} calls to ${route}`);
    expect(received.length).toBeGreaterThanOrEqual(count);
    return received;
  }
});
