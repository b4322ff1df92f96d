import { postA2a } from '../support/a2a-rpc';
import { randomUUID } from 'node:crypto';
import type { Client } from '@a2a-js/sdk/client';
import { TaskState, type Task } from '@a2a-js/sdk';
import { dataPart } from '../support/a2a-agent';
import { a2aClientFor, sendMessageRequest } from '../support/a2a-client';
import { accepts, acceptsAndHearsCancel, completes, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { reportOn, tool } from '../support/tasks';
import { until } from '../support/until';

/** SendMessage of one data part through the SDK's client: the task it started. */
const sendData = async (client: Client, value: unknown, returnImmediately = false) =>
  (await client.sendMessage(sendMessageRequest([dataPart(value)], returnImmediately))) as Task;

describe('the A2A JSON-RPC endpoint of an agent', () => {
  const server = useAgentServer();

  it('runs a SendMessage as a task of the agent, and answers GetTask with its result, through the A2A SDK', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('a2a-echo', (received) =>
        completes({ echoed: (received.body as { params: unknown }).params })(received),
      ),
      capabilities: { tools: [tool('echo', { text: { type: 'string' } })] },
    });
    const client = await a2aClientFor(agent.agentId);
    // A2A's default: the answer waits for the task to end.
    const sent = await sendData(client, { skill: 'echo', params: { text: 'hi' } });
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(sent.artifacts[0].parts[0].content).toEqual({ $case: 'data', value: { echoed: { text: 'hi' } } });
    const done = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
    expect(done.artifacts[0].parts[0].content).toEqual({ $case: 'data', value: { echoed: { text: 'hi' } } });
    // The same task, as the service's own API shows it.
    expect((await call('GET', `/tasks/${sent.id}`, { apiKey: 'admin' })).body).toMatchObject({
      status: 'completed',
      agentId: agent.agentId,
      operation: 'tools/echo',
    });
  });

  it('answers a message sent again, whatever its messageId holds, with the task the first sending started', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('a2a-once', completes({})) });
    const send = (text: string) =>
      postA2a(`/a2a/${agent.agentId}`, {
        apiKey: 'admin',
        body: {
          jsonrpc: '2.0',
          id: text,
          method: 'SendMessage',
          params: { message: { messageId: 'message one, ünïcode', role: 'ROLE_USER', parts: [{ text }] } },
        },
      });
    const first = await send('once');
    const again = await send('once');
    expect(first.body.result.task.id).toEqual(expect.any(String));
    expect(again.body.result.task.id).toBe(first.body.result.task.id);
    expect(server().callsTo('a2a-once').length).toBeLessThanOrEqual(1);
  });

  it('cancels a task the agent is working on, and answers -32002 for one that already ended', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('a2a-slow', acceptsAndHearsCancel),
      capabilities: { tools: [tool('wait')] },
    });
    const client = await a2aClientFor(agent.agentId);
    const sent = await sendData(client, { params: {} }, true);
    await until(async () => {
      const task = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
      return task.status?.state === TaskState.TASK_STATE_WORKING;
    }, 'the agent working on it');
    const cancelled = await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const again = await postA2a(`/a2a/${agent.agentId}`, {
      apiKey: 'admin',
      body: { jsonrpc: '2.0', id: 2, method: 'CancelTask', params: { id: sent.id } },
    });
    expect(again.body).toMatchObject({ id: 2, error: { code: -32002 } });
  });

  it("answers the spec's errors: unknown task, unsupported method, another major version", async () => {
    const agent = await registerAgent();
    const rpc = (method: string, params: unknown, headers: Record<string, string> = {}) =>
      postA2a(`/a2a/${agent.agentId}`, {
        apiKey: 'admin',
        headers,
        body: { jsonrpc: '2.0', id: 7, method, params },
      });
    expect((await rpc('GetTask', { id: 'no-such-task' })).body).toMatchObject({ id: 7, error: { code: -32001 } });
    expect((await rpc('GetTask', {})).body).toMatchObject({ error: { code: -32602 } });
    expect((await rpc('ListTasks', { pageSize: 1000 })).body).toMatchObject({ error: { code: -32602 } });
    expect((await rpc('ListTasks', { pageToken: 'not-ours' })).body).toMatchObject({ error: { code: -32602 } });
    expect((await rpc('CreateTaskPushNotificationConfig', {})).body).toMatchObject({ error: { code: -32003 } });
    expect((await rpc('tasks/nothing', {})).body).toMatchObject({ error: { code: -32601 } });
    expect((await rpc('GetTask', { id: 'x' }, { 'a2a-version': '2.0' })).body).toMatchObject({
      error: { code: -32009 },
    });
    expect((await postA2a(`/a2a/${agent.agentId}`, { apiKey: 'admin', body: { id: 1 } })).body).toMatchObject({
      error: { code: -32600 },
    });
  });
  it("answers -32601 for a method named after a member of JavaScript's objects", async () => {
    const agent = await registerAgent();
    for (const method of ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty']) {
      const answered = await postA2a(`/a2a/${agent.agentId}`, {
        apiKey: 'admin',
        body: { jsonrpc: '2.0', id: 8, method, params: {} },
      });
      expect({ method, status: answered.status, body: answered.body }).toEqual({
        method,
        status: 200,
        body: {
          jsonrpc: '2.0',
          id: 8,
          error: {
            code: -32601,
            message: `No method ${method}`,
            data: [
              {
                '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
                reason: 'METHOD_NOT_FOUND',
                domain: 'a2a-protocol.org',
              },
            ],
          },
        },
      });
    }
  });

  it('lists the tasks of the agent a caller may read, newest first, a page at a time', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('a2a-listed', completes({ done: true })) });
    const other = await registerAgent();
    const client = await a2aClientFor(agent.agentId);
    const sent: string[] = [];
    for (const word of ['one', 'two', 'three']) {
      const task = await sendData(client, { params: { text: word } });
      sent.push(task.id);
    }
    const list = (params: Record<string, unknown>, apiKey = 'admin') =>
      postA2a(`/a2a/${agent.agentId}`, {
        apiKey,
        body: { jsonrpc: '2.0', id: 'list', method: 'ListTasks', params },
      });
    const first = await client.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 2,
      pageToken: '',
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: undefined,
    });
    expect(first.tasks.map((task) => task.id)).toEqual([sent[2], sent[1]]);
    expect(first).toMatchObject({ pageSize: 2, totalSize: 3, nextPageToken: expect.any(String) });
    const second = (await list({ pageSize: 2, pageToken: first.nextPageToken })).body.result;
    expect(second.tasks.map((task: { id: string }) => task.id)).toEqual([sent[0]]);
    expect(second.nextPageToken).toBe('');
    // Filtered by state, with artifacts; by context, which is one task here.
    await until(async () => (await list({ status: 'TASK_STATE_COMPLETED' })).body.result.totalSize === 3, 'all done');
    const completed = (await list({ status: 'TASK_STATE_COMPLETED', includeArtifacts: true })).body.result;
    expect(completed.tasks[0].artifacts[0].parts[0].data).toEqual({ done: true });
    expect((await list({ status: 'TASK_STATE_WORKING' })).body.result.tasks).toEqual([]);
    expect((await list({ contextId: sent[1] })).body.result.tasks.map((task: { id: string }) => task.id)).toEqual([
      sent[1],
    ]);
    // The agent itself reads them all; another agent none: it created none of them.
    expect((await list({}, agent.apiKey)).body.result.totalSize).toBe(3);
    expect((await list({}, other.apiKey)).body.result).toMatchObject({ tasks: [], totalSize: 0 });
  });

  it('streams a task from SendStreamingMessage to its result, and to a SubscribeToTask of it', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('a2a-streamed', accepts) });
    const client = await a2aClientFor(agent.agentId);
    const stream = client.sendMessageStream(sendMessageRequest([dataPart({ params: { text: 'stream me' } })]));
    const first = await stream.next();
    expect(first.value?.payload?.$case).toBe('task');
    const task = (first.value!.payload as { value: Task }).value;
    await until(
      async () =>
        (await client.getTask({ tenant: '', id: task.id, historyLength: undefined })).status?.state ===
        TaskState.TASK_STATE_WORKING,
      'the agent took it',
    );
    const subscribed = client.resubscribeTask({ tenant: '', id: task.id });
    const subscribedFirst = await subscribed.next();
    expect(subscribedFirst.value?.payload).toMatchObject({ $case: 'task', value: { id: task.id } });
    const rest = (async () => {
      const seen = [];
      for await (const event of stream) seen.push(event.payload);
      return seen;
    })();
    const subscribedRest = (async () => {
      const seen = [];
      for await (const event of subscribed) seen.push(event.payload);
      return seen;
    })();
    expect((await reportOn(task.id, agent.apiKey, { status: 'completed', result: { streamed: true } })).status).toBe(
      200,
    );
    for (const events of await Promise.all([rest, subscribedRest])) {
      const last = events.at(-1);
      expect(last).toMatchObject({ $case: 'statusUpdate', value: { taskId: task.id } });
      expect((last as { value: { status: { state: TaskState } } }).value.status.state).toBe(
        TaskState.TASK_STATE_COMPLETED,
      );
      const artifact = events.find((event) => event?.$case === 'artifactUpdate');
      expect(artifact).toMatchObject({
        value: { artifact: { parts: [{ content: { $case: 'data', value: { streamed: true } } }] } },
      });
    }
    // A task that ended has nothing more to stream.
    const ended = await postA2a(`/a2a/${agent.agentId}`, {
      apiKey: 'admin',
      body: { jsonrpc: '2.0', id: 9, method: 'SubscribeToTask', params: { id: task.id } },
    });
    expect(ended.body).toMatchObject({ id: 9, error: { code: -32004 } });
  });

  it('answers an input request with a message that names the task', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('a2a-asks', accepts) });
    const client = await a2aClientFor(agent.agentId);
    const sent = await sendData(client, { params: { text: 'ask me' } }, true);
    await until(async () => {
      const task = await call('GET', `/tasks/${sent.id}`, { apiKey: 'admin' });
      return task.body.phase === 'awaiting_agent_report';
    }, 'the agent took it');
    const asked = await reportOn(sent.id, agent.apiKey, {
      status: 'input-required',
      message: 'Which colour?',
      inputSchema: { type: 'object', required: ['colour'], properties: { colour: { type: 'string' } } },
    });
    expect(asked.status).toBe(200);
    const waiting = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const answer = (value: unknown) =>
      postA2a(`/a2a/${agent.agentId}`, {
        apiKey: 'admin',
        body: {
          jsonrpc: '2.0',
          id: 'answer',
          method: 'SendMessage',
          params: {
            message: { messageId: randomUUID(), taskId: sent.id, role: 'ROLE_USER', parts: [{ data: value }] },
            configuration: { returnImmediately: true },
          },
        },
      });
    expect((await answer({ colour: 7 })).body).toMatchObject({ error: { code: -32602 } });
    const answered = await answer({ colour: 'blue' });
    expect(answered.body.result.task).toMatchObject({ id: sent.id, status: { state: 'TASK_STATE_WORKING' } });
    await until(
      () =>
        server()
          .callsTo('a2a-asks')
          .some((received) => (received.body as { input?: unknown }).input !== undefined),
      'the agent got the input',
    );
    const delivered = server()
      .callsTo('a2a-asks')
      .find((received) => (received.body as { input?: unknown }).input !== undefined);
    expect(delivered?.body).toMatchObject({ taskId: sent.id, input: { colour: 'blue' } });
    // Answered already: the task waits for nothing.
    expect((await answer({ colour: 'red' })).body).toMatchObject({ error: { code: -32004 } });
  });
  it('answers SendMessage once the task ended, or asks for input, unless told returnImmediately', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('a2a-waited', accepts) });
    const client = await a2aClientFor(agent.agentId);
    const atOnce = await sendData(client, { params: { text: 'now' } }, true);
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(atOnce.status?.state);
    await until(
      async () =>
        (await call('GET', `/tasks/${atOnce.id}`, { apiKey: 'admin' })).body.phase === 'awaiting_agent_report',
      'the agent took it',
    );
    const report = reportOn(atOnce.id, agent.apiKey, { status: 'completed', result: { late: true } });
    expect((await report).status).toBe(200);

    // The default waits: the agent asks for input while the request is open, and the answer says so.
    const waiting = sendData(client, { params: { text: 'wait' } });
    const taskId = await until(
      () =>
        server()
          .callsTo('a2a-waited')
          .map((received) => received.body as { taskId: string; params: { text?: string } })
          .find((body) => body.params?.text === 'wait')?.taskId,
      'the agent was called',
    );
    await until(
      async () => (await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body.phase === 'awaiting_agent_report',
      'the agent took it',
    );
    expect((await reportOn(taskId, agent.apiKey, { status: 'input-required', message: 'Sure?' })).status).toBe(200);
    const answered = await waiting;
    expect(answered).toMatchObject({ id: taskId, status: { state: TaskState.TASK_STATE_INPUT_REQUIRED } });
  });
});
