import { randomUUID } from 'node:crypto';
import { accepts, completes, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { eventIdOf } from '../../src/mcp-server/call-event-ids';
import { eventsOf, inSession, openSession, postInSession } from '../support/mcp-raw';
import { tool, waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { until } from '../support/until';

const callOf = (id: string | number, toolName: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: toolName, arguments: {} },
});

describe('the calls of a session, as clients really send them', () => {
  const server = useAgentServer();

  it('answers a call whose request id the session used before, as a host started again on its saved session does', async () => {
    const name = `Again ${randomUUID().slice(0, 6)}`;
    await registerAgent({
      name,
      mcpUrl: server().route('mcp-same-id', completes({ done: true })),
      capabilities: { tools: [tool('work')] },
    });
    const { baseUrl } = testStack();
    const sessionId = await openSession(baseUrl);
    for (const round of [1, 2]) {
      const reply = await postInSession(baseUrl, sessionId, callOf(1, `${name.replace(' ', '_')}.work`));
      expect(reply.status).toBe(200);
      const answer = eventsOf(await reply.text()).find((event) => event.data?.id === 1)?.data;
      expect({ round, answer }).toMatchObject({ round, answer: { result: { structuredContent: { done: true } } } });
    }
    expect(server().callsTo('mcp-same-id')).toHaveLength(2);
  });

  it('cancels a call whose notifications/cancelled overtook it, arriving before its task started', async () => {
    const name = `Overtaken ${randomUUID().slice(0, 6)}`;
    await registerAgent({
      name,
      mcpUrl: server().route('mcp-overtaken', accepts),
      capabilities: { tools: [tool('wait')] },
    });
    const { baseUrl } = testStack();
    const sessionId = await openSession(baseUrl);
    const cancelled = await postInSession(baseUrl, sessionId, {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'early', reason: 'changed my mind' },
    });
    expect(cancelled.status).toBe(202);
    const stream = new AbortController();
    const calling = postInSession(baseUrl, sessionId, callOf('early', `${name.replace(' ', '_')}.wait`), stream.signal);
    try {
      const taskId = await until(
        () => server().callsTo('mcp-overtaken')[0]?.body?.taskId as string | undefined,
        'the call to the agent',
      );
      expect((await waitForTask(taskId)).status).toBe('cancelled');
      const answer = eventsOf(await (await calling).text()).find((event) => event.data?.id === 'early')?.data;
      expect(answer).toMatchObject({ result: { isError: true } });
    } finally {
      stream.abort();
    }
  });

  it("resumes a stream cut after its first event though it came back before the call's record", async () => {
    const name = `Early ${randomUUID().slice(0, 6)}`;
    await registerAgent({
      name,
      mcpUrl: server().route('mcp-early-resume', completes({ resumed: true })),
      capabilities: { tools: [tool('work')] },
    });
    const { baseUrl } = testStack();
    const sessionId = await openSession(baseUrl);
    // The id of the stream's first event, which the client holds before anything else of the call.
    const resumed = fetch(`${baseUrl}/mcp`, {
      headers: inSession(sessionId, {
        accept: 'text/event-stream',
        'last-event-id': eventIdOf({ sessionId, requestId: 'soon', seq: 0 }),
      }),
    });
    const calling = postInSession(baseUrl, sessionId, callOf('soon', `${name.replace(' ', '_')}.work`));
    const reply = await resumed;
    expect(reply.status).toBe(200);
    const answer = eventsOf(await reply.text()).find((event) => event.data?.id === 'soon')?.data;
    expect(answer).toMatchObject({ result: { structuredContent: { resumed: true } } });
    expect((await calling).status).toBe(200);
    expect(server().callsTo('mcp-early-resume')).toHaveLength(1);
  });
});
