import { completes, useAgentServer } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { useEventStreams } from '../support/event-stream';
import { call, expectError } from '../support/http';
import { startTask, waitForTask } from '../support/tasks';

describe('who may read task events, and what a request must say', () => {
  const server = useAgentServer();
  const openStream = useEventStreams();
  let agent: RegisteredAgent;
  let stranger: RegisteredAgent;
  let taskId: string;
  let compositionId: string;
  let compositionTaskId: string;

  beforeAll(async () => {
    agent = await registerAgent({ mcpUrl: server().route('done', completes({ text: 'done' })) });
    stranger = await registerAgent();
    taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'mine' } });
    const composed = await call('POST', '/tasks/compose', {
      apiKey: 'admin',
      body: [{ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'in a composition' } }],
    });
    expect(composed.status).toBe(202);
    compositionId = composed.body[0].compositionId;
    compositionTaskId = composed.body[0].taskId;
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed' });
  });

  it('answers a caller who may not read the task or composition 404, as for an unknown id', async () => {
    for (const path of [`/tasks/${taskId}/events`, `/tasks/${taskId}/events?format=json`]) {
      const error = expectError(await call('GET', path, { apiKey: stranger.apiKey }), 404, 'NOT_FOUND');
      expect(error.message).toBe(`Task ${taskId} not found`);
    }
    expect(
      expectError(await call('GET', '/tasks/no-such-task/events', { apiKey: 'admin' }), 404, 'NOT_FOUND').message,
    ).toBe('Task no-such-task not found');
    for (const path of [`/compositions/${compositionId}/events`, `/compositions/${compositionId}/events?format=json`]) {
      const error = expectError(await call('GET', path, { apiKey: stranger.apiKey }), 404, 'NOT_FOUND');
      expect(error.message).toBe(`Composition ${compositionId} not found`);
    }
    expect(
      expectError(await call('GET', '/compositions/no-such-composition/events', { apiKey: 'admin' }), 404, 'NOT_FOUND')
        .message,
    ).toBe('Composition no-such-composition not found');
    expectError(await call('GET', `/tasks/${compositionTaskId}/events`, { apiKey: stranger.apiKey }), 404, 'NOT_FOUND');
    // Access is judged before the request itself: a stranger learns nothing from a malformed one either.
    expectError(
      await call('GET', `/tasks/${taskId}/events`, {
        apiKey: stranger.apiKey,
        headers: { 'last-event-id': 'abc:xyz' },
      }),
      404,
      'NOT_FOUND',
    );
    const anonymous = await call('GET', `/tasks/${taskId}/events?format=json`);
    expect(anonymous.status).toBe(401);
  });

  it("gives the task's agent its events", async () => {
    const reply = await call('GET', `/tasks/${taskId}/events?format=json`, { apiKey: agent.apiKey });
    expect(reply.status).toBe(200);
    expect(reply.body.map((event: { type: string }) => event.type)).toEqual(['created', 'started', 'completed']);
    const stream = await openStream(`/tasks/${taskId}/events`, { apiKey: agent.apiKey });
    await stream.closedWithin();
    expect(stream.data).toEqual(reply.body);
  });

  it.each([
    ['a Last-Event-ID that is no event id', { 'last-event-id': 'abc:xyz' }, ''],
    ['a negative Last-Event-ID', { 'last-event-id': '-1' }, ''],
    ['a fractional Last-Event-ID', { 'last-event-id': '1.5' }, ''],
    ['an ?after= that is no event id', {}, '?after=abc%3Axyz'],
    ['an unknown ?format=', {}, '?format=xml'],
    ['an unknown query parameter', {}, '?since=3'],
  ])('refuses %s with 400 VALIDATION_ERROR on both routes', async (_name, headers, query) => {
    for (const path of [`/tasks/${taskId}/events${query}`, `/compositions/${compositionId}/events${query}`]) {
      const reply = await call('GET', path, { apiKey: 'admin', headers });
      expect({ path, status: reply.status }).toEqual({ path, status: 400 });
      expectError(reply, 400, 'VALIDATION_ERROR');
    }
  });
});
