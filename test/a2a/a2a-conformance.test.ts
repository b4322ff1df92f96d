import { A2A_VERSION_HEADERS, postA2a } from '../support/a2a-rpc';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { dataPart } from '../support/a2a-agent';
import { a2aClientFor, sendMessageRequest } from '../support/a2a-client';
import { accepts, acceptsAndHearsCancel, completes, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { reportOn } from '../support/tasks';
import { until } from '../support/until';
import { MAX_TASK_WAIT_MS } from '../../src/tasks/task-request-schema';
import { useEventStreams, type EventStreamReader } from '../support/event-stream';

/*
 * The MUSTs (and MUST NOTs) of A2A 1.0 (a2aproject/A2A, docs/specification.md) that the service's
 * JSON-RPC endpoint claims (docs/a2a.md), one test each: here, or where another file asserts it
 * already.
 *
 * | MUST                                                                                  | Test                                                                                |
 * |---------------------------------------------------------------------------------------|-------------------------------------------------------------------------------------|
 * | §3.1.1 non-blocking SendMessage MUST return at once (§3.2.2)                          | a2a-endpoint: "answers SendMessage once the task ended, or asks for input, ..."     |
 * | §3.2.2 blocking SendMessage MUST wait for a terminal or interrupted state             | a2a-endpoint: same test (input-required); beyond 30 s: below                         |
 * | §3.1.2 the stream MUST begin with the Task and close at COMPLETED                     | a2a-endpoint: "streams a task from SendStreamingMessage ..." (SDK); framing below   |
 * | §3.1.4 nextPageToken MUST be present, "" on the last page; paging; status filter      | a2a-endpoint: "lists the tasks of the agent a caller may read, ..."                 |
 * | §3.1.4 MUST return only tasks visible to the client (§13.1)                           | a2a-endpoint: same test (another agent's key lists none); a2a-contexts: "lists ..." |
 * | §3.1.5 CancelTask returns the updated Task; TaskNotCancelable for an ended task       | a2a-endpoint: "cancels a task the agent is working on, ..."                         |
 * | §3.1.6 SubscribeToTask MUST return the Task first; -32004 for an ended task           | a2a-endpoint: "streams a task ..."                                                  |
 * | §3.3.4 push notification config methods MUST return -32003 (Create)                   | a2a-endpoint: "answers the spec's errors ..."; a2a-errors: "names A2A's own ..."    |
 * | §3.4.1 a generated contextId MUST be in the response; a client's is kept              | a2a-contexts: "keeps a client's contextId ..."                                      |
 * | §3.4.3 Agents MUST reject mismatching contextId and taskId                            | a2a-contexts: "answers the input request of the context's last task ..."            |
 * | §3.6.2 an unsupported major A2A-Version MUST get VersionNotSupportedError             | a2a-endpoint: "answers the spec's errors ..."; a2a-errors: "names A2A's own ..."    |
 * | §9.5 error.data: objects with @type, ErrorInfo first: -32700, -32600                  | a2a-errors: "answers malformed JSON -32700, ..."                                    |
 * | §9.5 error.data for -32602 (INVALID_PARAMS, VALIDATION_ERROR, OPERATION_NOT_SUPPORTED)| a2a-errors: "answers params that fail ...", "answers a messageId sent again ..."    |
 * | §9.5 error.data for -32001, -32003, -32009, -32601                                    | a2a-errors: "names A2A's own errors in a google.rpc.ErrorInfo ..."                  |
 * | §3.1.1 ContentTypeNotSupportedError (-32005) for a part's media type                  | a2a-errors: "answers a part of a media type the agent does not take -32005"         |
 * | §8.3.1 each interface MUST declare its binding and URL                                | agent-cards: "serves a public agent's card to anyone, as the A2A SDK reads it"      |
 * | §8.1 A2A Servers MUST make an Agent Card available                                    | agent-cards: every test                                                             |
 * | JSON-RPC 2.0 (§9.3): a notification is not answered                                  | a2a-errors: "runs no notification (a request without id) ..."                       |
 *
 * Every other MUST the service claims is a test below, named by its section; a MUST it does not
 * meet is an `it.todo`, saying why (docs/a2a.md, "Conformance").
 */

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const A2A_DOMAIN = 'a2a-protocol.org';
const TERMINAL_STATES = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];
/** §5.6.1: ISO 8601 in UTC, with a Z and no other offset. */
const UTC_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** One JSON-RPC call of `method` to the agent's endpoint, as it answered. */
const rpc = (
  agentId: string,
  method: string,
  params: unknown,
  options: { id?: string | number | null; apiKey?: string; headers?: Record<string, string> } = {},
) =>
  postA2a(`/a2a/${agentId}`, {
    apiKey: options.apiKey ?? 'admin',
    headers: options.headers ?? {},
    body: { jsonrpc: '2.0', id: options.id === undefined ? method : options.id, method, params },
  });

/** SendMessage's params for one data part `{params: {text}}`, answered at once unless `wait`. */
const message = (text: string, extra: Record<string, unknown> = {}, wait = false) => ({
  message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ data: { params: { text } } }], ...extra },
  ...(wait ? {} : { configuration: { returnImmediately: true } }),
});

/** The task a SendMessage started (with the admin key unless told). */
async function started(agentId: string, text: string, extra: Record<string, unknown> = {}, apiKey = 'admin') {
  const sent = await rpc(agentId, 'SendMessage', message(text, extra), { apiKey });
  expect(sent.body.error).toBeUndefined();
  return sent.body.result.task as { id: string; contextId: string; status: { state: string } };
}

/** Waits until the agent took the task (202) and the service awaits its report. */
const taken = (taskId: string) =>
  until(
    async () => (await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body.phase === 'awaiting_agent_report',
    'the agent took it',
  );

/** The A2A state of a task, as GetTask answers it. */
const stateOf = async (agentId: string, taskId: string) =>
  (await rpc(agentId, 'GetTask', { id: taskId })).body.result?.status?.state as string | undefined;

/** The StreamResponse of each event of an A2A stream so far. */
const resultsOf = (stream: EventStreamReader): any[] => stream.data.map((data) => data.result);

/** Resolves once `predicate` holds for the stream's StreamResponses so far. */
const whenResults = (stream: EventStreamReader, predicate: (results: any[]) => boolean) =>
  stream.waitFor((events) => predicate(events.map((event) => event.data.result)));

/** The A2A state each StreamResponse leaves the task in (undefined for an artifact update). */
const statesOf = (results: any[]) =>
  results.map((result) => (result.task ?? result.statusUpdate)?.status?.state as string | undefined);

describe('A2A 1.0 JSON-RPC binding: the MUSTs the service claims', () => {
  const server = useAgentServer();
  const openEventStream = useEventStreams();
  /** A2A's stream answering a JSON-RPC request of `method`, read as it comes. */
  const openStream = (agentId: string, method: string, params: unknown, id: string | number = 'stream') =>
    openEventStream(`/a2a/${agentId}`, { headers: A2A_VERSION_HEADERS, body: { jsonrpc: '2.0', id, method, params } });

  it('§9.1, §9.3 every method of §5.3 answers one JSON-RPC 2.0 response (application/json): jsonrpc "2.0", the request\'s id, exactly one of result and error', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-envelope', completes({ ok: true })) });
    const task = await started(agent.agentId, 'envelope');
    const methods: Array<[string, unknown]> = [
      ['SendMessage', message('again')],
      ['GetTask', { id: task.id }],
      ['ListTasks', {}],
      ['CancelTask', { id: task.id }],
      ['CreateTaskPushNotificationConfig', { taskId: task.id, url: 'http://127.0.0.1:9/hook' }],
      ['GetTaskPushNotificationConfig', { taskId: task.id, id: 'c' }],
      ['ListTaskPushNotificationConfigs', { taskId: task.id }],
      ['DeleteTaskPushNotificationConfig', { taskId: task.id, id: 'c' }],
      ['GetExtendedAgentCard', {}],
    ];
    for (const [method, params] of methods)
      for (const id of ['request-1', 0, 42, null]) {
        const answered = await rpc(agent.agentId, method, params, { id });
        expect({ method, id, status: answered.status, type: answered.headers.get('content-type') }).toEqual({
          method,
          id,
          status: 200,
          type: expect.stringMatching(/^application\/json/),
        });
        expect({ method, jsonrpc: answered.body.jsonrpc, id: answered.body.id }).toEqual({
          method,
          jsonrpc: '2.0',
          id,
        });
        expect({
          method,
          members: Object.keys(answered.body).filter((key) => key === 'result' || key === 'error'),
        }).toEqual({ method, members: [expect.stringMatching(/^(result|error)$/)] });
        // §5.3's names are the methods: none of them is "method not found".
        expect({ method, code: answered.body.error?.code }).not.toEqual({ method, code: -32601 });
      }
  });

  it('§9.4.1 SendMessage MUST return a Task or a Message: a SendMessageResponse holding one of them', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-send', completes({ sent: true })) });
    for (const wait of [false, true]) {
      const answered = await rpc(agent.agentId, 'SendMessage', message('one', {}, wait));
      expect(Object.keys(answered.body.result)).toEqual(['task']);
      expect(answered.body.result.task).toMatchObject({
        id: expect.any(String),
        contextId: expect.any(String),
        status: { state: expect.stringMatching(/^TASK_STATE_/) },
      });
    }
  });

  it('§3.4.2 Agents MUST generate a unique taskId for each new task, and include it in the Task returned', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-ids', completes({})) });
    const client = await a2aClientFor(agent.agentId);
    const ids = new Set<string>();
    for (const text of ['a', 'b', 'c']) {
      const task = (await client.sendMessage(sendMessageRequest([dataPart({ params: { text } })], true))) as {
        id: string;
      };
      expect(task.id).not.toBe('');
      ids.add(task.id);
      expect((await client.getTask({ tenant: '', id: task.id, historyLength: undefined })).id).toBe(task.id);
    }
    expect(ids.size).toBe(3);
  });

  it("§3.4.2 a message's taskId MUST reference an existing task: Agents MUST return TaskNotFoundError otherwise", async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-no-task', completes({})) });
    const client = await a2aClientFor(agent.agentId);
    const request = sendMessageRequest([dataPart({ params: { text: 'x' } })], true);
    const refused = await client
      .sendMessage({ ...request, message: { ...request.message, taskId: 'no-such-task' } })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(TaskNotFoundError);
    expect(server().callsTo('conf-no-task')).toEqual([]);
  });

  it('§3.4.3 Agents MUST infer contextId from the task if only taskId is provided', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-infer', accepts) });
    const contextId = randomUUID();
    const task = await started(agent.agentId, 'ask', { contextId });
    await taken(task.id);
    expect((await reportOn(task.id, agent.apiKey, { status: 'input-required', message: 'More?' })).status).toBe(200);
    const answered = await rpc(agent.agentId, 'SendMessage', {
      message: { messageId: randomUUID(), taskId: task.id, role: 'ROLE_USER', parts: [{ data: { more: true } }] },
      configuration: { returnImmediately: true },
    });
    expect(answered.body.result.task).toMatchObject({ id: task.id, contextId });
  });

  it('§3.1.1 a message to a task in a terminal state is refused: UnsupportedOperationError (-32004), data a google.rpc.ErrorInfo', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-ended', completes({ done: true })) });
    const task = await started(agent.agentId, 'end');
    await until(async () => (await stateOf(agent.agentId, task.id)) === 'TASK_STATE_COMPLETED', 'completed');
    const refused = await rpc(agent.agentId, 'SendMessage', {
      message: { messageId: randomUUID(), taskId: task.id, role: 'ROLE_USER', parts: [{ data: { more: true } }] },
    });
    expect(refused.body.error.code).toBe(-32004);
    expect(refused.body.error.data[0]).toMatchObject({
      '@type': ERROR_INFO,
      reason: 'UNSUPPORTED_OPERATION',
      domain: A2A_DOMAIN,
    });
    for (const detail of refused.body.error.data) expect(detail['@type']).toEqual(expect.any(String));
  });

  it("§3.1.2, §9.4.2 SendStreamingMessage: 200 text/event-stream, each event one JSON-RPC response with the request's id; the Task first, then its updates in order, open through INPUT_REQUIRED, closed at COMPLETED", async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-stream', accepts) });
    const stream = await openStream(agent.agentId, 'SendStreamingMessage', message('stream', {}, true), 31);
    expect({ status: stream.status, type: stream.contentType }).toEqual({
      status: 200,
      type: expect.stringMatching(/^text\/event-stream/),
    });
    await whenResults(stream, (results) => results.length > 0);
    const task = resultsOf(stream)[0].task;
    expect(task).toMatchObject({ id: expect.any(String), contextId: expect.any(String) });
    await taken(task.id);
    expect((await reportOn(task.id, agent.apiKey, { status: 'input-required', message: 'Colour?' })).status).toBe(200);
    await whenResults(stream, (results) => statesOf(results).includes('TASK_STATE_INPUT_REQUIRED'));
    // An interrupted state is not a terminal one: the stream stays open.
    expect(stream.endedByServer).toBe(false);
    const answer = await rpc(agent.agentId, 'SendMessage', {
      message: { messageId: randomUUID(), taskId: task.id, role: 'ROLE_USER', parts: [{ data: { colour: 'blue' } }] },
      configuration: { returnImmediately: true },
    });
    expect(answer.body.result.task.id).toBe(task.id);
    await until(
      () =>
        server()
          .callsTo('conf-stream')
          .some((received) => (received.body as { input?: unknown }).input !== undefined),
      'the agent got the input',
    );
    await taken(task.id);
    expect((await reportOn(task.id, agent.apiKey, { status: 'completed', result: { colour: 'blue' } })).status).toBe(
      200,
    );
    await stream.closedWithin();

    for (const event of stream.events) {
      expect(event.data).toMatchObject({ jsonrpc: '2.0', id: 31, result: expect.any(Object) });
      expect(Object.keys(event.data.result)).toHaveLength(1);
    }
    for (const result of resultsOf(stream).slice(1)) {
      const update = result.statusUpdate ?? result.artifactUpdate;
      expect(update).toMatchObject({ taskId: task.id, contextId: task.contextId });
    }
    // §3.5.2: in the order they happened; the SSE ids follow the task's event log.
    const ids = stream.events.map((event) => Number(event.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const states = statesOf(resultsOf(stream)).filter((state) => state !== undefined);
    const changes = states.filter((state, index) => state !== states[index - 1]);
    expect(changes.slice(changes.indexOf('TASK_STATE_INPUT_REQUIRED'))).toEqual([
      'TASK_STATE_INPUT_REQUIRED',
      'TASK_STATE_WORKING',
      'TASK_STATE_COMPLETED',
    ]);
    expect(
      changes.slice(0, changes.indexOf('TASK_STATE_INPUT_REQUIRED')).every((state) => !TERMINAL_STATES.includes(state)),
    ).toBe(true);
    // The result, then the final status: the last event.
    expect(resultsOf(stream).at(-2)).toMatchObject({
      artifactUpdate: { artifact: { artifactId: expect.any(String), parts: [{ data: { colour: 'blue' } }] } },
    });
    expect(resultsOf(stream).at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('§3.1.2 the stream MUST close when the task reaches TASK_STATE_FAILED or TASK_STATE_CANCELED', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-stream-ends', acceptsAndHearsCancel) });
    const failing = await openStream(agent.agentId, 'SendStreamingMessage', message('fail', {}, true));
    const cancelled = await openStream(agent.agentId, 'SendStreamingMessage', message('cancel', {}, true));
    for (const stream of [failing, cancelled]) await whenResults(stream, (results) => results.length > 0);
    const [failingId, cancelledId] = [failing, cancelled].map((stream) => resultsOf(stream)[0].task.id as string);
    await taken(failingId);
    await taken(cancelledId);
    const failed = await reportOn(failingId, agent.apiKey, {
      status: 'failed',
      error: { code: 'BROKEN', message: 'It broke' },
    });
    expect(failed.status).toBe(200);
    expect((await rpc(agent.agentId, 'CancelTask', { id: cancelledId })).body.result.status.state).toBe(
      'TASK_STATE_CANCELED',
    );
    for (const [stream, state] of [
      [failing, 'TASK_STATE_FAILED'],
      [cancelled, 'TASK_STATE_CANCELED'],
    ] as const) {
      await stream.closedWithin();
      expect(resultsOf(stream).at(-1).statusUpdate.status.state).toBe(state);
    }
  });

  it('§3.5.2 events MUST be broadcast to all active streams of a task, the same events in the same order; closing one MUST NOT affect the others', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-broadcast', accepts) });
    const task = await started(agent.agentId, 'watch');
    await taken(task.id);
    const watchers = [];
    for (const id of [1, 2, 3]) watchers.push(await openStream(agent.agentId, 'SubscribeToTask', { id: task.id }, id));
    for (const stream of watchers) await whenResults(stream, (results) => results.length > 0);
    watchers[2].disconnect();
    expect((await reportOn(task.id, agent.apiKey, { status: 'input-required', message: 'Sure?' })).status).toBe(200);
    for (const stream of watchers.slice(0, 2))
      await whenResults(stream, (results) => statesOf(results).includes('TASK_STATE_INPUT_REQUIRED'));
    await rpc(agent.agentId, 'CancelTask', { id: task.id });
    for (const stream of watchers.slice(0, 2)) await stream.closedWithin();
    const [first, second] = watchers;
    expect(second.events.map((event) => [event.id, event.data.result])).toEqual(
      first.events.map((event) => [event.id, event.data.result]),
    );
    expect(statesOf(resultsOf(first)).at(-1)).toBe('TASK_STATE_CANCELED');
  });

  it('§3.1.6, §3.1.5 SubscribeToTask and CancelTask of a task that does not exist: TaskNotFoundError (-32001); TaskNotCancelableError (-32002) carries its ErrorInfo', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-cancel', completes({})) });
    for (const method of ['SubscribeToTask', 'CancelTask']) {
      const missing = await rpc(agent.agentId, method, { id: 'no-such-task' });
      expect({ method, error: missing.body.error }).toMatchObject({
        method,
        error: { code: -32001, data: [{ '@type': ERROR_INFO, reason: 'TASK_NOT_FOUND', domain: A2A_DOMAIN }] },
      });
    }
    const task = await started(agent.agentId, 'done');
    await until(async () => (await stateOf(agent.agentId, task.id)) === 'TASK_STATE_COMPLETED', 'completed');
    const ended = await rpc(agent.agentId, 'CancelTask', { id: task.id });
    expect(ended.body.error).toMatchObject({
      code: -32002,
      data: [{ '@type': ERROR_INFO, reason: 'TASK_NOT_CANCELABLE', domain: A2A_DOMAIN, metadata: { taskId: task.id } }],
    });
  });

  it("§3.3.2 Servers MUST NOT reveal the existence of tasks the client may not access: another caller's task is TaskNotFoundError, as one that does not exist", async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-hidden', accepts) });
    const [alice, bob] = [await registerAgent(), await registerAgent()];
    const task = await started(agent.agentId, 'mine', {}, alice.apiKey);
    for (const method of ['GetTask', 'CancelTask', 'SubscribeToTask']) {
      const hidden = await rpc(agent.agentId, method, { id: task.id }, { apiKey: bob.apiKey });
      const missing = await rpc(agent.agentId, method, { id: 'no-such-task' }, { apiKey: bob.apiKey });
      const withoutId = (error: { message: string; data: Array<Record<string, unknown>> }, id: string) =>
        JSON.parse(JSON.stringify(error).split(id).join('<id>'));
      expect({ method, error: withoutId(hidden.body.error, task.id) }).toEqual({
        method,
        error: withoutId(missing.body.error, 'no-such-task'),
      });
    }
    const sent = await rpc(
      agent.agentId,
      'SendMessage',
      { message: { messageId: randomUUID(), taskId: task.id, role: 'ROLE_USER', parts: [{ data: {} }] } },
      { apiKey: bob.apiKey },
    );
    expect(sent.body.error.code).toBe(-32001);
    expect((await rpc(agent.agentId, 'ListTasks', {}, { apiKey: bob.apiKey })).body.result.totalSize).toBe(0);
  });

  it('§3.3.2 Servers MUST reject requests with missing or invalid credentials', async () => {
    const agent = await registerAgent();
    const body = { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} };
    const none = await postA2a(`/a2a/${agent.agentId}`, { body });
    const wrong = await postA2a(`/a2a/${agent.agentId}`, { body, apiKey: 'not-a-key' });
    for (const refused of [none, wrong])
      expect({ status: refused.status, code: refused.body.error.code }).toEqual({
        status: 401,
        code: 'UNAUTHENTICATED',
      });
  });

  it('§3.1.4 ListTasks pageSize is 1 to 100, 50 when unspecified; pageSize and totalSize are always present', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-page-size', completes({})) });
    await started(agent.agentId, 'one');
    for (const pageSize of [0, -1, 101, 2.5])
      expect((await rpc(agent.agentId, 'ListTasks', { pageSize })).body.error).toMatchObject({
        code: -32602,
        data: [{ '@type': ERROR_INFO, reason: 'INVALID_PARAMS', domain: A2A_DOMAIN }, expect.any(Object)],
      });
    for (const [params, pageSize] of [
      [{}, 50],
      [{ pageSize: 1 }, 1],
      [{ pageSize: 100 }, 100],
    ] as const) {
      const listed = (await rpc(agent.agentId, 'ListTasks', params)).body.result;
      expect(listed).toMatchObject({ pageSize, totalSize: 1, nextPageToken: expect.any(String) });
      expect(listed.tasks).toHaveLength(1);
    }
  });

  it('§3.1.4 when includeArtifacts is false (the default) the artifacts field MUST be omitted from each Task', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-artifacts', completes({ made: true })) });
    const task = await started(agent.agentId, 'make');
    await until(async () => (await stateOf(agent.agentId, task.id)) === 'TASK_STATE_COMPLETED', 'completed');
    for (const params of [{}, { includeArtifacts: false }]) {
      const [listed] = (await rpc(agent.agentId, 'ListTasks', params)).body.result.tasks;
      expect(listed.id).toBe(task.id);
      expect(listed).not.toHaveProperty('artifacts');
    }
    const [withArtifacts] = (await rpc(agent.agentId, 'ListTasks', { includeArtifacts: true })).body.result.tasks;
    expect(withArtifacts.artifacts).toEqual([expect.objectContaining({ parts: [{ data: { made: true } }] })]);
  });

  it('§3.1.4 statusTimestampAfter returns only the tasks whose status timestamp is greater than or equal to it', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-after', completes({})) });
    const task = await started(agent.agentId, 'when');
    await until(async () => (await stateOf(agent.agentId, task.id)) === 'TASK_STATE_COMPLETED', 'completed');
    const { timestamp } = (await rpc(agent.agentId, 'GetTask', { id: task.id })).body.result.status;
    const after = (statusTimestampAfter: string) =>
      rpc(agent.agentId, 'ListTasks', { statusTimestampAfter }).then((answered) =>
        answered.body.result.tasks.map((listed: { id: string }) => listed.id),
      );
    expect(await after(timestamp)).toEqual([task.id]);
    expect(await after(new Date(Date.parse(timestamp) + 1).toISOString())).toEqual([]);
  });

  it('§3.1.4 ListTasks MUST sort tasks by their last update (status timestamp), newest first, page after page', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-order', acceptsAndHearsCancel) });
    const first = await started(agent.agentId, 'first');
    await taken(first.id);
    const second = await started(agent.agentId, 'second');
    await taken(second.id);
    // The first task created is the last updated.
    expect((await rpc(agent.agentId, 'CancelTask', { id: first.id })).body.error).toBeUndefined();
    const listed = (await rpc(agent.agentId, 'ListTasks', {})).body.result;
    expect(listed.tasks.map((task: { id: string }) => task.id)).toEqual([first.id, second.id]);
    const [newer, older] = listed.tasks.map((task: { status: { timestamp: string } }) => task.status.timestamp);
    expect(Date.parse(newer)).toBeGreaterThanOrEqual(Date.parse(older));
    const page = (await rpc(agent.agentId, 'ListTasks', { pageSize: 1 })).body.result;
    expect(page.tasks.map((task: { id: string }) => task.id)).toEqual([first.id]);
    const next = (await rpc(agent.agentId, 'ListTasks', { pageSize: 1, pageToken: page.nextPageToken })).body.result;
    expect(next.tasks.map((task: { id: string }) => task.id)).toEqual([second.id]);
  });

  it('§3.2.4 GetTask historyLength: the server MUST NOT return more messages than it asks for', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-history', completes({})) });
    const task = await started(agent.agentId, 'history');
    for (const historyLength of [0, 1, 2]) {
      const read = (await rpc(agent.agentId, 'GetTask', { id: task.id, historyLength })).body.result;
      expect((read.history ?? []).length).toBeLessThanOrEqual(historyLength);
    }
    // §3.3.2: Servers MUST validate all input parameters before processing.
    for (const historyLength of [-1, 1.5, '2'])
      expect((await rpc(agent.agentId, 'GetTask', { id: task.id, historyLength })).body.error).toMatchObject({
        code: -32602,
        data: [{ reason: 'INVALID_PARAMS' }, { fieldViolations: [{ field: '/historyLength' }] }],
      });
  });

  it('§5.5, §5.6.1 JSON uses camelCase and ProtoJSON enum names; timestamps are ISO 8601 in UTC (Z)', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-json', accepts) });
    const task = await started(agent.agentId, 'json');
    await taken(task.id);
    await reportOn(task.id, agent.apiKey, { status: 'failed', error: { code: 'BROKEN', message: 'It broke' } });
    await until(async () => (await stateOf(agent.agentId, task.id)) === 'TASK_STATE_FAILED', 'failed');
    const read = (await rpc(agent.agentId, 'GetTask', { id: task.id })).body.result;
    expect(read.status.timestamp).toMatch(UTC_TIMESTAMP);
    expect(read.status.message).toMatchObject({
      role: 'ROLE_AGENT',
      messageId: expect.any(String),
      parts: [expect.any(Object)],
    });
    const keys: string[] = [];
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(collect);
      else if (typeof value === 'object' && value !== null)
        for (const [key, member] of Object.entries(value)) {
          keys.push(key);
          // A data part's value and metadata are the caller's and the agent's JSON, not A2A's.
          if (key !== 'data' && key !== 'metadata') collect(member);
        }
    };
    collect(read);
    expect(keys.filter((key) => key.includes('_'))).toEqual([]);
  });

  it('§3.3.4 when capabilities.pushNotifications is false, every push notification config method MUST return PushNotificationNotSupportedError', async () => {
    const agent = await registerAgent();
    const card = await call('GET', `/agents/${agent.agentId}/.well-known/agent-card.json`);
    expect(card.body.capabilities.pushNotifications).toBe(false);
    for (const method of [
      'GetTaskPushNotificationConfig',
      'ListTaskPushNotificationConfigs',
      'DeleteTaskPushNotificationConfig',
    ]) {
      const answered = await rpc(agent.agentId, method, { taskId: 't', id: 'c' });
      expect({ method, error: answered.body.error }).toMatchObject({
        method,
        error: {
          code: -32003,
          data: [{ '@type': ERROR_INFO, reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED', domain: A2A_DOMAIN }],
        },
      });
    }
  });

  it('§3.3.4 when capabilities.extendedAgentCard is absent, GetExtendedAgentCard MUST return UnsupportedOperationError', async () => {
    const agent = await registerAgent();
    const card = await call('GET', `/agents/${agent.agentId}/.well-known/agent-card.json`);
    expect(card.body.capabilities.extendedAgentCard ?? false).toBe(false);
    const answered = await rpc(agent.agentId, 'GetExtendedAgentCard', {});
    expect(answered.body.error).toMatchObject({
      code: -32004,
      data: [{ '@type': ERROR_INFO, reason: 'UNSUPPORTED_OPERATION', domain: A2A_DOMAIN }],
    });
  });

  it('§3.6.2 Agents MUST process requests with the requested Major.Minor, and answer VersionNotSupportedError for one the interface does not speak; a patch version is not considered', async () => {
    const agent = await registerAgent();
    const card = await call('GET', `/agents/${agent.agentId}/.well-known/agent-card.json`);
    expect(card.body.supportedInterfaces.map((face: { protocolVersion: string }) => face.protocolVersion)).toEqual([
      '1.0',
    ]);
    const withVersion = (version: string) =>
      rpc(agent.agentId, 'ListTasks', {}, { headers: { 'a2a-version': version } });
    for (const version of ['1.0', '1.0.3'])
      expect({ version, result: (await withVersion(version)).body.result }).toMatchObject({
        version,
        result: { tasks: [] },
      });
    for (const version of ['1.1', '1.9', '0.3', '1', 'one']) {
      const refused = await withVersion(version);
      expect({ version, error: refused.body.error }).toMatchObject({
        version,
        error: { code: -32009, data: [{ '@type': ERROR_INFO, reason: 'VERSION_NOT_SUPPORTED', domain: A2A_DOMAIN }] },
      });
    }
  });

  it('§3.6.2 Agents MUST interpret an empty A2A-Version as 0.3, which this endpoint does not speak: -32009', async () => {
    const agent = await registerAgent();
    const body = { jsonrpc: '2.0', id: 'unversioned', method: 'ListTasks', params: {} };
    for (const headers of [{}, { 'a2a-version': ' ' }] as Array<Record<string, string>>) {
      const refused = await call('POST', `/a2a/${agent.agentId}`, { apiKey: 'admin', headers, body });
      expect({ headers, status: refused.status, body: refused.body }).toMatchObject({
        headers,
        status: 200,
        body: {
          id: 'unversioned',
          error: {
            code: -32009,
            data: [
              {
                '@type': ERROR_INFO,
                reason: 'VERSION_NOT_SUPPORTED',
                domain: A2A_DOMAIN,
                metadata: { requestedVersion: '0.3', supportedVersions: '1.0' },
              },
            ],
          },
        },
      });
    }
  });

  it('§3.2.2 a blocking SendMessage MUST wait until the task ends or is interrupted, however long that takes', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('conf-blocking', accepts) });
    const blocking = rpc(agent.agentId, 'SendMessage', message('slow', {}, true));
    const taskId = await until(async () => {
      const [task] = (await rpc(agent.agentId, 'ListTasks', {})).body.result.tasks;
      return task?.id as string | undefined;
    }, 'the task started');
    await taken(taskId);
    // Past the 30 s a task lookup waits at most (MAX_TASK_WAIT_MS), which bounded this wait too.
    await sleep(MAX_TASK_WAIT_MS + 2_000);
    expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { done: true } })).status).toBe(200);
    const answered = (await blocking).body;
    expect(answered.error).toBeUndefined();
    expect(answered.result.task).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_COMPLETED' } });
  });

  it("§4.4.1, §5.7 an agent's card has every REQUIRED field, and every REQUIRED array holds at least one element", async () => {
    const agent = await registerAgent();
    const card = (await call('GET', `/agents/${agent.agentId}/.well-known/agent-card.json`)).body;
    expectRequiredCardFields(card);
  });

  it("§5.7 the service's own card (/.well-known/agent-card.json) has every REQUIRED field, and its interface answers", async () => {
    const card = (await call('GET', '/.well-known/agent-card.json')).body;
    expectRequiredCardFields(card);
    const [face] = card.supportedInterfaces;
    const path = new URL(face.url).pathname;
    const listed = await postA2a(path, {
      apiKey: 'admin',
      body: { jsonrpc: '2.0', id: 'own', method: 'ListTasks', params: {} },
    });
    expect(listed.body).toEqual({ jsonrpc: '2.0', id: 'own', result: expect.objectContaining({ tasks: [] }) });
  });
});

/** AgentCard's REQUIRED fields (specification/a2a.proto), the arrays non-empty (§5.7). */
function expectRequiredCardFields(card: Record<string, any>): void {
  for (const field of ['name', 'description', 'version'])
    expect({ field, value: card[field] }).toEqual({ field, value: expect.stringMatching(/./) });
  expect(card.capabilities).toEqual(expect.any(Object));
  for (const field of ['supportedInterfaces', 'defaultInputModes', 'defaultOutputModes', 'skills'])
    expect({ field, length: card[field]?.length }).toEqual({ field, length: expect.any(Number) });
  for (const field of ['supportedInterfaces', 'defaultInputModes', 'defaultOutputModes', 'skills'])
    expect({ field, empty: card[field].length === 0 }).toEqual({ field, empty: false });
  for (const face of card.supportedInterfaces)
    expect(face).toMatchObject({
      url: expect.stringMatching(/^https?:\/\//),
      protocolBinding: 'JSONRPC',
      protocolVersion: expect.stringMatching(/^\d+\.\d+$/),
    });
  for (const skill of card.skills) {
    expect(skill).toMatchObject({ id: expect.stringMatching(/./), name: expect.stringMatching(/./) });
    expect(typeof skill.description).toBe('string');
    expect(skill.tags.length).toBeGreaterThan(0);
  }
}
