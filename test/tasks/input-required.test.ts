import { accepts, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { EventStreamReader } from '../support/event-stream';
import { reportOn, startTask, waitForTask } from '../support/tasks';
import { until } from '../support/until';

const CONFIRMATION = {
  type: 'object',
  required: ['confirm'],
  additionalProperties: false,
  properties: { confirm: { type: 'boolean' } },
};

describe('a task that asks a person for input', () => {
  const server = useAgentServer();

  it('waits as input-required, takes a checked answer from its creator, delivers it signed, then ends with the report', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('asks', accepts) });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'delete all' } });
    const stream = await EventStreamReader.open(`/tasks/${taskId}/events`);
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });

    const asked = await reportOn(taskId, agent.apiKey, {
      status: 'input-required',
      message: 'Delete everything?',
      inputSchema: CONFIRMATION,
    });
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ taskId, status: 'input-required' });
    const { requestId } = asked.body;
    expect(await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).toMatchObject({
      body: {
        status: 'input-required',
        inputRequest: { requestId, message: 'Delete everything?', inputSchema: CONFIRMATION },
      },
    });

    expectError(
      await call('POST', `/tasks/${taskId}/input`, { apiKey: 'admin', body: { input: { confirm: 'yes' } } }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await call('POST', `/tasks/${taskId}/input`, { apiKey: agent.apiKey, body: { input: { confirm: true } } }),
      403,
      'FORBIDDEN',
    );
    const answered = await call('POST', `/tasks/${taskId}/input`, {
      apiKey: 'admin',
      body: { input: { confirm: true } },
    });
    expect(answered).toMatchObject({ status: 200, body: { taskId, status: 'pending', requestId } });
    expectError(
      await call('POST', `/tasks/${taskId}/input`, { apiKey: 'admin', body: { input: { confirm: true } } }),
      409,
      'CONFLICT',
    );

    const delivered = await until(
      () =>
        server()
          .callsTo('asks')
          .find((received) => received.body?.input !== undefined),
      'the input delivered to the agent',
    );
    expect(delivered.body).toEqual({ taskId, operation: 'tools/echo', requestId, input: { confirm: true } });
    expect(delivered.headers['webhook-id']).toBe(`${taskId}-input-${requestId}`);

    expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { deleted: 0 } })).status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { deleted: 0 } });
    await stream.closed;
    expect(stream.data.map((event) => event.type)).toEqual([
      'created',
      'started',
      'accepted',
      'input_required',
      'input_received',
      'completed',
    ]);
    expect(stream.data[3]).toMatchObject({ requestId, message: 'Delete everything?', inputSchema: CONFIRMATION });
    expect(stream.data[4]).toMatchObject({ requestId, input: { confirm: true } });
  });

  it('lets an agent ask five times, each answered and delivered, and refuses a sixth request with 409', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('asks-often', accepts) });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'again' } });
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    for (let round = 1; round <= 5; round += 1) {
      const asked = await reportOn(taskId, agent.apiKey, { status: 'input-required', message: `Question ${round}?` });
      expect(asked.status).toBe(200);
      const answered = await call('POST', `/tasks/${taskId}/input`, { apiKey: 'admin', body: { input: round } });
      expect(answered.status).toBe(200);
      await until(
        () =>
          server()
            .callsTo('asks-often')
            .some((received) => received.body?.input === round),
        `answer ${round} delivered`,
      );
    }
    expectError(
      await reportOn(taskId, agent.apiKey, { status: 'input-required', message: 'Question 6?' }),
      409,
      'CONFLICT',
    );
    expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { rounds: 5 } })).status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed' });
  });
});
