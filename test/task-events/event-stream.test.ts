import { accepts, completes, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { EventStreamReader } from '../support/event-stream';
import { reportOn, startTask, waitForTask } from '../support/tasks';

describe('a task event stream', () => {
  const server = useAgentServer();

  it('replays the events of an ended task, then closes', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('sync', completes({ text: 'done' })) });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'hi' } });
    await waitForTask(taskId);
    const stream = await EventStreamReader.open(`/tasks/${taskId}/events`);
    await stream.closed;
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    expect(stream.events.map((event) => [event.id, event.data.type])).toEqual([
      ['1', 'created'],
      ['2', 'started'],
      ['3', 'completed'],
    ]);
    expect(stream.data[2]).toMatchObject({ taskId, seq: 3, result: { text: 'done' }, attempts: 1 });
  });

  it('streams progress live, then the report that ends it', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('async', accepts) });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'hi' } });
    const stream = await EventStreamReader.open(`/tasks/${taskId}/events`);
    await stream.waitFor((events) => events.some((event) => event.data.type === 'accepted'));
    expect((await reportOn(taskId, agent.apiKey, { status: 'pending', progress: 0.5, message: 'half' })).status).toBe(
      200,
    );
    await stream.waitFor((events) => events.some((event) => event.data.type === 'progress'));
    expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { ok: true } })).status).toBe(200);
    await stream.closed;
    expect(stream.data.map((event) => event.type)).toEqual(['created', 'started', 'accepted', 'progress', 'completed']);
    expect(stream.data[3]).toMatchObject({ progress: 0.5, message: 'half' });
    const json = await call('GET', `/tasks/${taskId}/events?format=json`, { apiKey: 'admin' });
    expect(json.body).toEqual(stream.data);
  });
});
