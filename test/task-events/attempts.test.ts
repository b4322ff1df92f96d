import { useAgentServer, type AgentBehaviour } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { useEventStreams } from '../support/event-stream';
import { call } from '../support/http';
import { startTask, waitForTask } from '../support/tasks';

/** Fast retries so the retry paths end within a test. */
const QUICK_RETRY = { maxAttempts: 3, initialIntervalMs: 100, backoffCoefficient: 1, maxIntervalMs: 100 };

describe('the events of calls to the agent', () => {
  const server = useAgentServer();
  const openStream = useEventStreams();

  async function startWith(route: string, behaviour: AgentBehaviour, retry: Record<string, unknown>) {
    const agent = await registerAgent({ mcpUrl: server().route(route, behaviour) });
    return startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: route }, retry });
  }

  it('logs each attempt: started, attempt_failed with its error, started again, then the end', async () => {
    let calls = 0;
    const taskId = await startWith(
      'busy-once',
      () =>
        (calls += 1) === 1
          ? { status: 503, body: 'busy' }
          : { status: 200, body: { status: 'completed', result: { text: 'second time' } } },
      QUICK_RETRY,
    );
    const live = await openStream(`/tasks/${taskId}/events`);
    await live.closedWithin();
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', attempts: 2 });

    expect(live.ids).toEqual(['1', '2', '3', '4', '5']);
    expect(live.data).toEqual([
      expect.objectContaining({ seq: 1, taskId, type: 'created', operation: 'tools/echo' }),
      { seq: 2, taskId, type: 'started', at: expect.any(String), attempt: 1 },
      {
        seq: 3,
        taskId,
        type: 'attempt_failed',
        at: expect.any(String),
        attempt: 1,
        error: { code: 'AGENT_UNREACHABLE', message: expect.stringContaining('503') },
      },
      { seq: 4, taskId, type: 'started', at: expect.any(String), attempt: 2 },
      {
        seq: 5,
        taskId,
        type: 'completed',
        at: expect.any(String),
        result: { text: 'second time' },
        attempts: 2,
      },
    ]);
    const times = live.data.map((event) => Date.parse(event.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const json = await call('GET', `/tasks/${taskId}/events?format=json`, { apiKey: 'admin' });
    expect(json.body).toEqual(live.data);
  });

  it('ends with failed after the last attempt failed', async () => {
    const taskId = await startWith('always-busy', () => ({ status: 503, body: 'busy' }), {
      ...QUICK_RETRY,
      maxAttempts: 2,
    });
    const stream = await openStream(`/tasks/${taskId}/events`);
    await stream.closedWithin();
    expect(stream.data.map((event) => [event.seq, event.type, event.attempt])).toEqual([
      [1, 'created', undefined],
      [2, 'started', 1],
      [3, 'attempt_failed', 1],
      [4, 'started', 2],
      [5, 'attempt_failed', 2],
      [6, 'failed', undefined],
    ]);
    expect(stream.data[5]).toMatchObject({ error: { code: 'AGENT_UNREACHABLE' }, attempts: 2 });
  });

  it('logs a refusal that is not retried as one failed attempt, then the end', async () => {
    const taskId = await startWith(
      'refuses',
      () => ({ status: 422, body: { error: { code: 'INVALID_PARAMS', message: 'no' } } }),
      QUICK_RETRY,
    );
    const stream = await openStream(`/tasks/${taskId}/events`);
    await stream.closedWithin();
    expect(stream.data.map((event) => event.type)).toEqual(['created', 'started', 'attempt_failed', 'failed']);
    const task = await waitForTask(taskId);
    expect(stream.data[2].error).toEqual({ code: task.error.code, message: task.error.message });
    expect(stream.data[3]).toMatchObject({ error: task.error, attempts: 1 });
  });
});
