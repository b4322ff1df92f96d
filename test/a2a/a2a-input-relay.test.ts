import { Role } from '@a2a-js/sdk';
import { temporal } from '@temporalio/proto';
import { COLOUR_SCHEMA, useA2aAgent } from '../support/a2a-agent';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { EventStreamReader } from '../support/event-stream';
import { call, expectError } from '../support/http';
import { startTask, waitForTask } from '../support/tasks';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';

const { EventType } = temporal.api.enums.v1;

describe("an A2A agent's task that waits for input, relayed to a person", () => {
  const a2a = useA2aAgent({ colour: 'asks-for-input', login: 'asks-for-auth', shrug: 'asks-then-works-on' });
  let agent: RegisteredAgent;

  beforeAll(async () => {
    agent = await registerAgent({ protocol: 'a2a', mcpUrl: a2a().cardUrl, capabilities: undefined });
  });

  it("makes the task input-required with the agent's message and schema, and sends the answer in the agent's task and context", async () => {
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/colour', params: { for: 'the fence' } });
    const stream = await EventStreamReader.open(`/tasks/${taskId}/events`);
    const waiting = await waitForTask(taskId, { until: (task) => task.status === 'input-required' });
    expect(waiting.inputRequest).toEqual({
      requestId: expect.any(String),
      message: 'Which colour?',
      inputSchema: COLOUR_SCHEMA,
    });
    expectError(
      await call('POST', `/tasks/${taskId}/input`, { apiKey: 'admin', body: { input: { shade: 'blue' } } }),
      400,
      'VALIDATION_ERROR',
    );
    const answered = await call('POST', `/tasks/${taskId}/input`, {
      apiKey: 'admin',
      body: { input: { colour: 'blue' }, requestId: waiting.inputRequest.requestId },
    });
    expect(answered.status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { answered: { colour: 'blue' } } });
    const a2aTaskId = a2a().taskFor(taskId)!;
    const answer = a2a().received.find((message) => message.messageId !== taskId && message.taskId === a2aTaskId);
    expect(answer).toMatchObject({
      role: Role.ROLE_USER,
      taskId: a2aTaskId,
      contextId: a2a().contextOfTask.get(a2aTaskId),
    });
    expect(answer!.parts[0].content).toEqual({ $case: 'data', value: { colour: 'blue' } });
    // The answer went once, however many polls saw the request meanwhile.
    expect(
      a2a()
        .received.filter((message) => message.taskId === a2aTaskId)
        .map((message) => message.messageId),
    ).toEqual([taskId, answer!.messageId]);
    await stream.closed;
    expect(stream.data.filter((event) => event.type.startsWith('input_'))).toMatchObject([
      { type: 'input_required', ...waiting.inputRequest },
      { type: 'input_received', requestId: waiting.inputRequest.requestId, input: { colour: 'blue' } },
    ]);
  });

  it('relays TASK_STATE_AUTH_REQUIRED the same way: a text answer goes as a text part', async () => {
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/login', params: {} });
    const waiting = await waitForTask(taskId, { until: (task) => task.status === 'input-required' });
    expect(waiting.inputRequest).toEqual({
      requestId: expect.any(String),
      message: 'Sign in at https://auth.example/login, then send the code',
    });
    expect((await call('POST', `/tasks/${taskId}/input`, { apiKey: 'admin', body: { input: 'code-42' } })).status).toBe(
      200,
    );
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { answered: 'code-42' } });
    const a2aTaskId = await until(() => a2a().taskFor(taskId), 'the agent knows the task');
    const answer = a2a().received.find((message) => message.messageId !== taskId && message.taskId === a2aTaskId);
    expect(answer!.parts[0].content).toEqual({ $case: 'text', value: 'code-42' });
  });

  it('withdraws the request when the agent goes on without an answer', async () => {
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/shrug', params: {} });
    await waitForTask(taskId, { until: (task) => task.status === 'input-required' });
    const a2aTaskId = await until(() => a2a().taskFor(taskId), 'the agent knows the task');
    a2a().finish(a2aTaskId);
    const withdrawn = await waitForTask(taskId, { until: (task) => task.status !== 'input-required' });
    expect(withdrawn).toMatchObject({ status: 'pending', phase: 'awaiting_agent_report' });
    expect(withdrawn).not.toHaveProperty('inputRequest');
    expectError(
      await call('POST', `/tasks/${taskId}/input`, { apiKey: 'admin', body: { input: 'red' } }),
      409,
      'CONFLICT',
    );
    a2a().finish(a2aTaskId);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: {} });
  });
});

describe("a person's answer to an A2A agent's request for input", () => {
  // An agent that pushes its task's updates has the task polled at each push and otherwise every
  // 60 s; while it waits for input it pushes nothing, so only the answer can bring the poll that
  // carries it before that.
  const a2a = useA2aAgent({ colour: 'asks-for-input' }, { pushNotifications: true });
  const client = useTemporalClient();

  it('has the task polled at once, and that poll carries the answer to the agent', async () => {
    const agent = await registerAgent({ protocol: 'a2a', mcpUrl: a2a().cardUrl, capabilities: undefined });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/colour', params: {} });
    await waitForTask(taskId, { until: (task) => task.status === 'input-required' });
    const answered = await call('POST', `/tasks/${taskId}/input`, {
      apiKey: 'admin',
      body: { input: { colour: 'green' } },
    });
    expect(answered.status).toBe(200);
    const a2aTaskId = a2a().taskFor(taskId)!;
    await until(
      () => a2a().received.some((message) => message.taskId === a2aTaskId && message.messageId !== taskId),
      'the agent got the answer',
    );
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { answered: { colour: 'green' } } });

    // In the run's history, the wait the answer fell in ended with it: its timer was cancelled, not
    // fired, and no push came between the answer and the poll after it.
    const events = (await client().workflow.getHandle(`task-${taskId}`).fetchHistory()).events ?? [];
    const answer = events.findIndex(
      (event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'inputAnswered',
    );
    expect(answer).toBeGreaterThan(-1);
    const sinceAnswer = events.slice(answer + 1);
    const poll = sinceAnswer.findIndex(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'pollA2aTask',
    );
    expect(poll).toBeGreaterThan(-1);
    const beforePoll = sinceAnswer.slice(0, poll).flatMap((event) => {
      if (event.eventType === EventType.EVENT_TYPE_TIMER_FIRED) return ['timer fired'];
      if (event.eventType === EventType.EVENT_TYPE_TIMER_CANCELED) return ['timer cancelled'];
      const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
      return signal ? [`signal ${signal}`] : [];
    });
    expect(beforePoll).toEqual(['timer cancelled']);
  });
});
