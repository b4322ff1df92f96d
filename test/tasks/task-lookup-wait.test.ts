import { useAgentServer, completes } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { until } from '../support/until';
import { gate } from '../support/gate';

/** GET /tasks/{taskId}?waitMs=: a pending task is answered once it ends, or as it stands when waitMs ran out. */
describe('GET /tasks/{taskId}?waitMs=', () => {
  const server = useAgentServer();
  let agent: RegisteredAgent;
  let slowAgent: RegisteredAgent;
  let silentAgent: RegisteredAgent;
  /** Holds the slow agent's answer until the test opens it. */
  const slowAnswer = gate();
  beforeAll(async () => {
    agent = await registerAgent({ mcpUrl: server().route('wait-quick', completes('quick')) });
    slowAgent = await registerAgent({
      mcpUrl: server().route('wait-slow', () => ({
        status: 200,
        body: { status: 'completed', result: 'slow' },
        heldUntil: slowAnswer.opened,
      })),
    });
    // Accepts and never reports: the task stays pending.
    silentAgent = await registerAgent({
      mcpUrl: server().route('wait-silent', () => ({ status: 202, body: { status: 'pending' } })),
    });
  });

  async function createTask(target: RegisteredAgent, apiKey = 'admin'): Promise<string> {
    const reply = await call('POST', '/tasks', {
      apiKey,
      body: { agentId: target.agentId, operation: 'tools/echo', params: { text: 'wait' } },
    });
    expect(reply.status).toBe(202);
    return reply.body.taskId;
  }

  it('answers a slow task once it completed, in one request', async () => {
    const taskId = await createTask(slowAgent);
    await until(() => server().callsTo('wait-slow').length > 0, 'the call to the slow agent');
    // Sent while the agent still holds its answer, which it gives once the lookup is on its way.
    const waiting = call('GET', `/tasks/${taskId}?waitMs=30000`, { apiKey: 'admin' });
    setTimeout(slowAnswer.open, 200);
    const reply = await waiting;
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ taskId, status: 'completed', result: { 0: 'slow' } });
  });

  it('answers at once when the task has already ended', async () => {
    const taskId = await createTask(agent);
    expect((await call('GET', `/tasks/${taskId}?waitMs=30000`, { apiKey: 'admin' })).body.status).toBe('completed');
    // That it answers without waiting is measured by bench/timing (a lookup of an ended task).
    const reply = await call('GET', `/tasks/${taskId}?waitMs=30000`, { apiKey: 'admin' });
    expect(reply.body).toMatchObject({ taskId, status: 'completed', result: { 0: 'quick' } });
  });

  it('returns the task still pending when waitMs runs out', async () => {
    const taskId = await createTask(silentAgent);
    const reply = await call('GET', `/tasks/${taskId}?waitMs=1500`, { apiKey: 'admin' });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ taskId, status: 'pending' });
    await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' });
  });

  it('wakes on a cancellation too', async () => {
    const taskId = await createTask(silentAgent);
    const waiting = call('GET', `/tasks/${taskId}?waitMs=30000`, { apiKey: 'admin' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
    expect((await waiting).body).toMatchObject({ taskId, status: 'cancelled' });
  });

  it('refuses strangers and unknown tasks before waiting', async () => {
    const creator = await registerAgent();
    const stranger = await registerAgent();
    const taskId = await createTask(silentAgent, creator.apiKey);
    // That they are refused without waiting is measured by bench/timing (a refused lookup).
    expect(
      expectError(await call('GET', `/tasks/${taskId}?waitMs=30000`, { apiKey: stranger.apiKey }), 404, 'NOT_FOUND')
        .message,
    ).toBe(`Task ${taskId} not found`);
    expectError(await call('GET', '/tasks/no-such-task?waitMs=30000', { apiKey: 'admin' }), 404, 'NOT_FOUND');
    expectError(await call('GET', `/tasks/${taskId}?waitMs=30000`), 401, 'UNAUTHENTICATED');
    await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' });
  });

  it.each(['abc', '-1', '30001', '1.5', ''])('refuses waitMs=%s with 400', async (waitMs) => {
    const taskId = await createTask(agent);
    const error = expectError(
      await call('GET', `/tasks/${taskId}?waitMs=${waitMs}`, { apiKey: 'admin' }),
      400,
      'VALIDATION_ERROR',
    );
    expect(error.message).toBe('Invalid query string: /waitMs must be a whole number of milliseconds from 0 to 30000');
  });
});
