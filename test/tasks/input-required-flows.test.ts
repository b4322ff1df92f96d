import { randomUUID } from 'node:crypto';
import { useAgentServer, type AgentBehaviour } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call, expectError, type Reply } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';
import { EventStreamReader } from '../support/event-stream';
import { reportOn, startTask, tool, waitForTask } from '../support/tasks';
import { until } from '../support/until';

const CONFIRMATION = {
  type: 'object',
  required: ['confirm'],
  additionalProperties: false,
  properties: { confirm: { type: 'boolean' } },
};

/**
 * Takes every task with 202 when its params say `ask`, else completes with its params; takes a
 * delivered input (a body with `input`) with 200.
 */
const asksWhenTold: AgentBehaviour = (received) => {
  if (received.body?.input !== undefined) return { status: 200, body: { taken: true } };
  if (received.body?.params?.ask) return { status: 202, body: { status: 'received' } };
  return { status: 200, body: { status: 'completed', result: received.body?.params ?? {} } };
};

const from = (taskId: string, field: string) => ({ source: { taskId, field } });

describe('input required', () => {
  const server = useAgentServer();
  let agent: RegisteredAgent;

  beforeAll(async () => {
    agent = await registerAgent({
      mcpUrl: server().route('flows', asksWhenTold),
      capabilities: { tools: [{ ...tool('relay'), inputSchema: { type: 'object' } }] },
    });
  });

  const relayTask = (params: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    agentId: agent.agentId,
    operation: 'tools/relay',
    params,
    ...extra,
  });
  /** The agent's calls that carried a task (not an input) for `taskId`. */
  const taskCallsOf = (taskId: string) =>
    server()
      .callsTo('flows')
      .filter((received) => received.body?.taskId === taskId && received.body?.input === undefined);
  /** The inputs delivered to the agent for `taskId`. */
  const inputCallsOf = (taskId: string) =>
    server()
      .callsTo('flows')
      .filter((received) => received.body?.taskId === taskId && received.body?.input !== undefined);

  /** A task of the agent, taken with 202 and awaiting its report. */
  async function acceptedTask(extra: Record<string, unknown> = {}): Promise<string> {
    const taskId = await startTask(relayTask({ ask: true }, extra));
    expect(await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' })).toMatchObject({
      status: 'pending',
      phase: 'awaiting_agent_report',
    });
    return taskId;
  }

  /** The agent asks for a confirmation; the request's id. */
  async function askConfirmation(taskId: string, message = 'Go ahead?'): Promise<string> {
    const asked = await reportOn(taskId, agent.apiKey, {
      status: 'input-required',
      message,
      inputSchema: CONFIRMATION,
    });
    expect(asked).toMatchObject({ status: 200, body: { taskId, status: 'input-required' } });
    return asked.body.requestId as string;
  }

  const answer = (taskId: string, body: Record<string, unknown>, apiKey = 'admin'): Promise<Reply> =>
    call('POST', `/tasks/${taskId}/input`, { apiKey, body });

  describe('in the middle of a diamond composition', () => {
    it('waits on one side while the other completes, and the join runs once the answer came and the side completed', async () => {
      const tag = randomUUID();
      const reply = await call('POST', '/tasks/compose', {
        apiKey: 'admin',
        body: [
          relayTask({ tag, step: 'root' }),
          relayTask({ tag, step: 'asking side', ask: true }, { parents: ['0'] }),
          relayTask({ tag, step: 'quick side' }, { parents: ['0'] }),
          relayTask(
            { tag, step: 'join', confirmed: from('1', 'confirmed'), quick: from('2', 'step') },
            {
              parents: ['1', '2'],
            },
          ),
        ],
      });
      expect(reply.status).toBe(202);
      const { compositionId } = reply.body[0];
      const [root, asking, quick, join] = reply.body.map((element: { taskId: string }) => element.taskId);

      await waitForTask(asking, { until: (task) => task.phase === 'awaiting_agent_report' });
      const requestId = await askConfirmation(asking, 'Publish both sides?');
      expect(await waitForTask(quick)).toMatchObject({ status: 'completed', result: { tag, step: 'quick side' } });

      // The quick side ended while the asking side waits: the join still waits for its parents.
      expect(await waitForTask(asking, { until: () => true })).toMatchObject({
        status: 'input-required',
        inputRequest: { requestId, message: 'Publish both sides?', inputSchema: CONFIRMATION },
      });
      const composition = await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' });
      expect(composition.status).toBe(200);
      expect(composition.body).toMatchObject({ compositionId, status: 'pending' });
      expect(
        composition.body.tasks.map((task: { taskId: string; status: string }) => [task.taskId, task.status]),
      ).toEqual([
        [root, 'completed'],
        [asking, 'input-required'],
        [quick, 'completed'],
        [join, 'pending'],
      ]);
      expect(composition.body.tasks[1].inputRequest).toEqual({
        requestId,
        message: 'Publish both sides?',
        inputSchema: CONFIRMATION,
      });
      expect(composition.body.tasks[3]).toMatchObject({ phase: 'waiting_for_parents' });
      expect(taskCallsOf(join)).toHaveLength(0);

      expect(await answer(asking, { input: { confirm: true }, requestId })).toMatchObject({
        status: 200,
        body: { taskId: asking, status: 'pending', requestId },
      });
      const delivered = await until(() => inputCallsOf(asking)[0], 'the input delivered to the asking side');
      expect(delivered.body).toEqual({
        taskId: asking,
        operation: 'tools/relay',
        requestId,
        input: { confirm: true },
      });
      // Still waiting for the agent's report: the join has not run.
      expect(await waitForTask(asking, { until: () => true })).toMatchObject({
        status: 'pending',
        phase: 'awaiting_agent_report',
      });
      expect(taskCallsOf(join)).toHaveLength(0);

      expect((await reportOn(asking, agent.apiKey, { status: 'completed', result: { confirmed: true } })).status).toBe(
        200,
      );
      expect(await waitForTask(join)).toMatchObject({
        status: 'completed',
        result: { tag, step: 'join', confirmed: true, quick: 'quick side' },
      });
      expect(taskCallsOf(join)).toHaveLength(1);
      const ended = await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' });
      expect(ended.body.status).toBe('completed');
      expect(ended.body.tasks[1].inputRequest).toBeUndefined();

      const events = await call('GET', `/compositions/${compositionId}/events?format=json`, { apiKey: 'admin' });
      expect(events.status).toBe(200);
      const ofAsking = (events.body as Array<{ taskId: string; type: string }>).filter(
        (event) => event.taskId === asking,
      );
      expect(ofAsking.map((event) => event.type)).toEqual([
        'created',
        'started',
        'accepted',
        'input_required',
        'input_received',
        'completed',
      ]);
      expect(ofAsking[4]).toMatchObject({ requestId, input: { confirm: true } });
    });
  });

  describe('an answer', () => {
    it('that fails the inputSchema is refused with its problem as details; the task keeps waiting and takes a valid one', async () => {
      const taskId = await acceptedTask();
      const requestId = await askConfirmation(taskId);

      // User schemas stop at the first problem (src/registry/user-schemas.ts): one per refusal.
      const wrongType = expectError(await answer(taskId, { input: { confirm: 'yes' } }), 400, 'VALIDATION_ERROR');
      expect(wrongType.message).toContain("request's inputSchema");
      expect(wrongType.details).toEqual([{ path: '/confirm', message: 'must be boolean' }]);
      const unknown = expectError(await answer(taskId, { input: { confirm: true, also: 1 } }), 400, 'VALIDATION_ERROR');
      expect(unknown.details).toEqual([{ path: '/', message: 'unknown property "also"' }]);
      const missing = expectError(await answer(taskId, { input: {} }), 400, 'VALIDATION_ERROR');
      expect(missing.details).toEqual([{ path: '/', message: "must have required property 'confirm'" }]);
      expectError(await answer(taskId, { input: 'yes' }), 400, 'VALIDATION_ERROR');
      // The body itself: no input, or a member the route does not know.
      expectError(await answer(taskId, {}), 400, 'VALIDATION_ERROR');
      expectError(await answer(taskId, { input: { confirm: true }, extra: 1 }), 400, 'VALIDATION_ERROR');
      expect(await waitForTask(taskId, { until: () => true })).toMatchObject({
        status: 'input-required',
        inputRequest: { requestId },
      });
      expect(inputCallsOf(taskId)).toHaveLength(0);

      expect(await answer(taskId, { input: { confirm: false } })).toMatchObject({
        status: 200,
        body: { taskId, status: 'pending', requestId },
      });
      const delivered = await until(() => inputCallsOf(taskId)[0], 'the valid input delivered');
      expect(delivered.body.input).toEqual({ confirm: false });
      expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { done: false } })).status).toBe(200);
      expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { done: false } });
    });

    it('given twice at once is taken once: one 200, one 409, one delivery', async () => {
      const taskId = await acceptedTask();
      const requestId = await askConfirmation(taskId);

      const inputs = [{ confirm: true }, { confirm: false }];
      const replies = await Promise.all(inputs.map((input) => answer(taskId, { input })));
      expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409]);
      const winner = replies.findIndex((reply) => reply.status === 200);
      expect(replies[winner].body).toEqual({ taskId, status: 'pending', requestId });
      expectError(replies[1 - winner], 409, 'CONFLICT');

      const delivered = await until(() => inputCallsOf(taskId)[0], 'the input delivered');
      expect(delivered.body).toEqual({ taskId, operation: 'tools/relay', requestId, input: inputs[winner] });
      // Time for a second delivery, were there one, before the report ends the workflow.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(inputCallsOf(taskId)).toHaveLength(1);

      expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { ok: true } })).status).toBe(200);
      expect(await waitForTask(taskId)).toMatchObject({ status: 'completed' });
      expect(inputCallsOf(taskId)).toHaveLength(1);
      const events = await call('GET', `/tasks/${taskId}/events?format=json`, { apiKey: 'admin' });
      const received = (events.body as Array<{ type: string }>).filter((event) => event.type === 'input_received');
      expect(received).toEqual([expect.objectContaining({ requestId, input: inputs[winner] })]);
    });

    it('lets the agent ask again: each request is answered and delivered on its own', async () => {
      const taskId = await acceptedTask();
      const first = await askConfirmation(taskId, 'First question?');
      expect((await answer(taskId, { input: { confirm: true } })).status).toBe(200);
      await until(() => inputCallsOf(taskId)[0], 'the first input delivered');
      await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });

      const second = await askConfirmation(taskId, 'Second question?');
      expect(second).not.toBe(first);
      // The first request is answered: naming it is a conflict, not an answer to the second.
      expectError(await answer(taskId, { input: { confirm: true }, requestId: first }), 409, 'CONFLICT');
      expect((await answer(taskId, { input: { confirm: false }, requestId: second })).status).toBe(200);
      const delivered = await until(() => inputCallsOf(taskId)[1], 'the second input delivered');
      expect(delivered.body).toEqual({
        taskId,
        operation: 'tools/relay',
        requestId: second,
        input: { confirm: false },
      });

      expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { asked: 2 } })).status).toBe(200);
      expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { asked: 2 } });
      expect(inputCallsOf(taskId).map((received) => received.body.requestId)).toEqual([first, second]);
    });
  });

  describe('an agent that refuses the delivered input', () => {
    it('fails the task AGENT_REJECTED at once: a 4xx to the input is final', async () => {
      const refusing = await registerAgent({
        mcpUrl: server().route('refuses-input', (received) =>
          received.body?.input !== undefined
            ? { status: 400, body: { error: 'not now' } }
            : { status: 202, body: { status: 'received' } },
        ),
      });
      const taskId = await startTask({ agentId: refusing.agentId, operation: 'tools/echo', params: { text: 'x' } });
      await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
      const asked = await reportOn(taskId, refusing.apiKey, { status: 'input-required', message: 'Which one?' });
      expect(asked.status).toBe(200);
      expect((await answer(taskId, { input: 'the first' })).status).toBe(200);

      const ended = await waitForTask(taskId);
      expect(ended).toMatchObject({ status: 'failed', error: { code: 'AGENT_REJECTED' } });
      const deliveries = server()
        .callsTo('refuses-input')
        .filter((received) => received.body?.taskId === taskId && received.body?.input !== undefined);
      expect(deliveries.map((received) => received.body.input)).toEqual(['the first']);
    });
  });

  describe('a wait that nobody answers', () => {
    it("fails the task INPUT_TIMEOUT at the task's timeoutMs; a late answer is 409", async () => {
      const timeoutMs = 2_000;
      const taskId = await acceptedTask({ timeoutMs });
      const stream = await EventStreamReader.open(`/tasks/${taskId}/events`);
      const requestId = await askConfirmation(taskId, 'Anyone there?');

      const ended = await waitForTask(taskId);
      expect(ended).toMatchObject({ status: 'failed', error: { code: 'INPUT_TIMEOUT' } });
      expect(ended.error.message).toContain('Anyone there?');
      expect(ended.inputRequest).toBeUndefined();

      expectError(await answer(taskId, { input: { confirm: true } }), 409, 'CONFLICT');
      expectError(await answer(taskId, { input: { confirm: true }, requestId }), 409, 'CONFLICT');
      expect(inputCallsOf(taskId)).toHaveLength(0);

      await stream.closed;
      expect(stream.data.map((event) => event.type)).toEqual([
        'created',
        'started',
        'accepted',
        'input_required',
        'failed',
      ]);
      expect(stream.data[4]).toMatchObject({ error: { code: 'INPUT_TIMEOUT' } });
    });
  });

  describe('wrong uses', () => {
    it('refuses input to a task that waits for none, and input for an unknown task', async () => {
      const taskId = await acceptedTask();
      expect(expectError(await answer(taskId, { input: { confirm: true } }), 409, 'CONFLICT').message).toContain(
        'waits for no input',
      );
      expectError(await answer(`no-such-${randomUUID()}`, { input: 1 }), 404, 'NOT_FOUND');

      expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { ok: true } })).status).toBe(200);
      expect(await waitForTask(taskId)).toMatchObject({ status: 'completed' });
      expectError(await answer(taskId, { input: { confirm: true } }), 409, 'CONFLICT');
      // An ended task asks for nothing either.
      expectError(
        await reportOn(taskId, agent.apiKey, { status: 'input-required', message: 'Too late?' }),
        409,
        'CONFLICT',
      );
    });

    it('refuses input-required reports without a message, with an unusable inputSchema, or with a result', async () => {
      const taskId = await acceptedTask();
      expect(
        expectError(await reportOn(taskId, agent.apiKey, { status: 'input-required' }), 400, 'VALIDATION_ERROR')
          .message,
      ).toContain('message');
      expectError(
        await reportOn(taskId, agent.apiKey, {
          status: 'input-required',
          message: 'What?',
          inputSchema: { type: 'nonsense' },
        }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await reportOn(taskId, agent.apiKey, { status: 'input-required', message: 'What?', inputSchema: 'text' }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await reportOn(taskId, agent.apiKey, { status: 'input-required', message: 'What?', result: { x: 1 } }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await reportOn(taskId, agent.apiKey, { status: 'completed', result: {}, inputSchema: CONFIRMATION }),
        400,
        'VALIDATION_ERROR',
      );
      expect(await waitForTask(taskId, { until: () => true })).toMatchObject({
        status: 'pending',
        phase: 'awaiting_agent_report',
      });
      expect((await waitForTask(taskId, { until: () => true })).inputRequest).toBeUndefined();

      const events = await call('GET', `/tasks/${taskId}/events?format=json`, { apiKey: 'admin' });
      expect((events.body as Array<{ type: string }>).map((event) => event.type)).toEqual([
        'created',
        'started',
        'accepted',
      ]);
      expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
    });

    it('lets only the agent (or an admin) ask, and only the creator (or an admin) answer a task outside rooms', async () => {
      const taskId = await acceptedTask();
      const stranger = await registerAgent();
      expectError(
        await reportOn(taskId, stranger.apiKey, { status: 'input-required', message: 'Mine?' }),
        404,
        'NOT_FOUND',
      );
      await askConfirmation(taskId);

      // Those who may not read the task learn nothing of it; its agent may read it, not answer it.
      expectError(await answer(taskId, { input: { confirm: true } }, stranger.apiKey), 404, 'NOT_FOUND');
      expectError(
        await call('POST', `/tasks/${taskId}/input`, {
          headers: await humanHeaders(newUserId()),
          body: { input: { confirm: true } },
        }),
        404,
        'NOT_FOUND',
      );
      expectError(await answer(taskId, { input: { confirm: true } }, agent.apiKey), 403, 'FORBIDDEN');
      expectError(await answer(taskId, { input: { confirm: true }, requestId: randomUUID() }), 409, 'CONFLICT');
      expect((await waitForTask(taskId, { until: () => true })).status).toBe('input-required');
      expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
      expect(await waitForTask(taskId)).toMatchObject({ status: 'cancelled' });
      expect((await waitForTask(taskId)).inputRequest).toBeUndefined();
    });

    it("refuses an MCP agent's input-required report: it asks through its MCP call", async () => {
      // Capabilities given by hand: the server is not read, and nothing listens at the default mcpUrl,
      // so the task stays pending while its call is retried.
      const mcpAgent = await registerAgent({ protocol: 'mcp' });
      const taskId = await startTask({ agentId: mcpAgent.agentId, operation: 'tools/echo', params: { text: 'x' } });
      const refused = expectError(
        await reportOn(taskId, mcpAgent.apiKey, { status: 'input-required', message: 'Sure?' }),
        400,
        'VALIDATION_ERROR',
      );
      expect(refused.message).toContain('MCP');
      expect((await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body.status).toBe('pending');
      expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
    });
  });
});
