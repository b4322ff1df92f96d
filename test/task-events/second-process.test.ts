import { accepts, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { useEventStreams } from '../support/event-stream';
import { call } from '../support/http';
import { useSecondApi } from '../support/second-api';
import { reportOn, startTask } from '../support/tasks';

/**
 * A stream served by an API process without a worker: every event of the task is written by the
 * test service's worker and API, so the second process hears of them only by reading the log.
 */
describe('a task event stream on another API process', () => {
  const server = useAgentServer();
  const secondApi = useSecondApi('task-events-second');
  const openStream = useEventStreams();

  it('streams events written by the other process live, then closes after the end', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('takes-it', accepts) });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'elsewhere' } });
    const path = `/tasks/${taskId}/events`;
    const onSecond = await openStream(path, { baseUrl: secondApi() });
    const onFirst = await openStream(path);
    expect(onSecond.status).toBe(200);
    await onSecond.waitFor((events) => events.some((event) => event.data.type === 'accepted'));

    for (const [step, message] of ['reading', 'writing'].entries()) {
      expect((await reportOn(taskId, agent.apiKey, { status: 'pending', progress: step / 2, message })).status).toBe(
        200,
      );
      await onSecond.waitFor((events) => events.some((event) => event.data.message === message));
    }
    expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { text: 'done' } })).status).toBe(200);
    await onSecond.closedWithin();
    await onFirst.closedWithin();

    expect(onSecond.data.map((event) => event.type)).toEqual([
      'created',
      'started',
      'accepted',
      'progress',
      'progress',
      'completed',
    ]);
    expect(onSecond.ids).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(onSecond.data[4]).toMatchObject({ taskId, seq: 5, progress: 0.5, message: 'writing' });
    expect(onSecond.data[5]).toMatchObject({ taskId, seq: 6, result: { text: 'done' }, attempts: 1 });
    expect(onSecond.events).toEqual(onFirst.events);
    const json = await call('GET', `${path}?format=json`, { apiKey: 'admin', baseUrl: secondApi() });
    expect(json.status).toBe(200);
    expect(json.body).toEqual(onSecond.data);

    // Opened after the end, on the process that wrote none of it: the whole log, then the close.
    const replay = await openStream(path, { baseUrl: secondApi(), lastEventId: '2' });
    await replay.closedWithin();
    expect(replay.events).toEqual(onSecond.events.slice(2));
  });

  it('streams the progress an agent reports through the second process itself', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('takes-it-too', accepts) });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'there' } });
    const onSecond = await openStream(`/tasks/${taskId}/events`, { baseUrl: secondApi() });
    await onSecond.waitFor((events) => events.some((event) => event.data.type === 'accepted'));
    const viaSecond = (body: Record<string, unknown>) =>
      call('POST', `/tasks/${taskId}/result`, { apiKey: agent.apiKey, body, baseUrl: secondApi() });
    expect((await viaSecond({ status: 'pending', message: 'halfway' })).status).toBe(200);
    expect((await viaSecond({ status: 'completed', result: { via: 'second' } })).status).toBe(200);
    await onSecond.closedWithin();
    expect(onSecond.data.map((event) => [event.seq, event.type])).toEqual([
      [1, 'created'],
      [2, 'started'],
      [3, 'accepted'],
      [4, 'progress'],
      [5, 'completed'],
    ]);
    expect(onSecond.data[4]).toMatchObject({ result: { via: 'second' } });
  });
});
