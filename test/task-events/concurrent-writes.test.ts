import { accepts, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { useEventStreams } from '../support/event-stream';
import { call } from '../support/http';
import { reportOn, startTask } from '../support/tasks';

const PARALLEL_REPORTS = 25;
const STREAMS = 5;

describe('task events written at the same time', () => {
  const server = useAgentServer();
  const openStream = useEventStreams();

  it('logs each of many progress reports sent at once, once, in one order that every stream shares', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('takes-it', accepts) });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'busy' } });
    const path = `/tasks/${taskId}/events`;
    const streams = await Promise.all(Array.from({ length: STREAMS }, () => openStream(path)));
    await streams[0].waitFor((events) => events.some((event) => event.data.type === 'accepted'));

    const messages = Array.from({ length: PARALLEL_REPORTS }, (_, index) => `report ${index + 1}`);
    const replies = await Promise.all(
      messages.map((message) => reportOn(taskId, agent.apiKey, { status: 'pending', message })),
    );
    const completion = await reportOn(taskId, agent.apiKey, { status: 'completed', result: {} });
    const closings = await Promise.allSettled(streams.map((stream) => stream.closedWithin()));
    const json = await call('GET', `${path}?format=json`, { apiKey: 'admin' });

    // One summary, so that a failure shows every consequence at once.
    const [first] = streams;
    const eventCount = 3 + PARALLEL_REPORTS + 1;
    expect({
      reportStatuses: replies.map((reply) => reply.status),
      completionStatus: completion.status,
      closings: closings.map((closing) => closing.status),
      seqs: first.data.map((event) => event.seq),
      progressMessages: first.data
        .filter((event) => event.type === 'progress')
        .map((event) => event.message)
        .sort(),
      lastType: first.data.at(-1)?.type,
      streamsAgree: streams.every((stream) => JSON.stringify(stream.events) === JSON.stringify(first.events)),
      jsonAgrees: JSON.stringify(json.body) === JSON.stringify(first.data),
    }).toEqual({
      reportStatuses: messages.map(() => 200),
      completionStatus: 200,
      closings: streams.map(() => 'fulfilled'),
      seqs: Array.from({ length: eventCount }, (_, index) => index + 1),
      progressMessages: [...messages].sort(),
      lastType: 'completed',
      streamsAgree: true,
      jsonAgrees: true,
    });
  });
});
