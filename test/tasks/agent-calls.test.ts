import { createHmac } from 'node:crypto';
import { useAgentServer, completes, type AgentBehaviour, accepts } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { waitForTask, startTask, reportOn } from '../support/tasks';

/** Fast retries so the retry paths end within a test. */
const QUICK_RETRY = { maxAttempts: 3, initialIntervalMs: 100, backoffCoefficient: 1, maxIntervalMs: 100 };

describe('calls to an agent and what its replies make of the task', () => {
  const server = useAgentServer();

  async function runTask(
    route: string,
    behaviour: AgentBehaviour,
    extra: Record<string, unknown> = {},
  ): Promise<{ agent: RegisteredAgent; taskId: string }> {
    const agent = await registerAgent({ mcpUrl: server().route(route, behaviour) });
    const taskId = await startTask({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: route },
      ...extra,
    });
    return { agent, taskId };
  }

  it('sends {taskId, operation, params} signed with the agent secret, and stores an object result as it is', async () => {
    const { agent, taskId } = await runTask('signed', completes({ text: 'done', 'a.b': 1, $c: 2 }));
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'completed',
      result: { text: 'done', 'a.b': 1, $c: 2 },
      attempts: 1,
    });

    const [received] = server().callsTo('signed');
    expect(received.body).toEqual({ taskId, operation: 'tools/echo', params: { text: 'signed' } });
    const id = received.headers['webhook-id'] as string;
    const timestamp = received.headers['webhook-timestamp'] as string;
    expect(id).toBe(`${taskId}-1`);
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(300);
    const key = Buffer.from(agent.signingSecret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${received.rawBody}`).digest('base64');
    expect(received.headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('calls with the signing secret and URL an agent has right now, even just after a task read it', async () => {
    const { agent, taskId } = await runTask('before-change', completes({ text: 'first' }));
    await waitForTask(taskId);
    const rotated = await call('POST', `/agents/${agent.agentId}/keys/rotate`, { apiKey: 'admin' });
    const moved = await call('PATCH', `/agents/${agent.agentId}`, {
      apiKey: 'admin',
      body: { mcpUrl: server().route('after-change', completes({ text: 'second' })) },
    });
    expect([rotated.status, moved.status]).toEqual([200, 200]);
    const secondTaskId = await startTask({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'again' },
    });
    expect(await waitForTask(secondTaskId)).toMatchObject({ status: 'completed', result: { text: 'second' } });

    const [received] = server().callsTo('after-change');
    const id = received.headers['webhook-id'] as string;
    const timestamp = received.headers['webhook-timestamp'] as string;
    const key = Buffer.from(rotated.body.signingSecret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${received.rawBody}`).digest('base64');
    expect(received.headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it.each([
    ['a string', 'plain text'],
    ['an array', [1, 2]],
    ['null', null],
  ])('stores %s result as {"0": value}', async (_what, result) => {
    const { taskId } = await runTask(`scalar-${_what.replace(/\W/g, '')}`, completes(result));
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { 0: result } });
  });

  it.each([
    [200, 'failed-200'],
    [400, 'failed-400'],
  ])('keeps the error of a failed reply (HTTP %i) as sent, without retrying', async (status, route) => {
    const error = { code: 'EXECUTION_ERROR', message: 'it broke', details: { where: 'here' } };
    const { taskId } = await runTask(route, () => ({ status, body: { status: 'failed', error } }), {
      retry: QUICK_RETRY,
    });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'failed', error });
    expect(server().callsTo(route)).toHaveLength(1);
  });

  it.each([
    ['a string', 'disk full'],
    ['an array', [{ code: 'A' }, { code: 'B' }]],
    ['a number', 42],
  ])('keeps an error that is %s as sent', async (what, error) => {
    const { taskId } = await runTask(`failed-${what.replace(/\W/g, '')}`, () => ({
      status: 200,
      body: { status: 'failed', error },
    }));
    expect((await waitForTask(taskId)).error).toEqual(error);
  });

  it.each([400, 404, 422])('fails on HTTP %i without a failed body, not retried', async (status) => {
    const route = `rejects-${status}`;
    const { taskId } = await runTask(route, () => ({ status, body: 'no' }), { retry: QUICK_RETRY });
    const task = await waitForTask(taskId);
    expect(task).toMatchObject({ status: 'failed', error: { code: 'AGENT_REJECTED' } });
    expect(server().callsTo(route)).toHaveLength(1);
  });

  it('retries 503 and 429 and completes when the agent recovers', async () => {
    let calls = 0;
    const { taskId } = await runTask(
      'flaky',
      () => {
        calls += 1;
        if (calls === 1) return { status: 503, body: 'busy' };
        if (calls === 2) return { status: 429, body: 'slow down' };
        return { status: 200, body: { status: 'completed', result: { ok: true } } };
      },
      { retry: QUICK_RETRY },
    );
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { ok: true }, attempts: 3 });
    expect(
      server()
        .callsTo('flaky')
        .map((received) => received.headers['webhook-id']),
    ).toEqual([`${taskId}-1`, `${taskId}-2`, `${taskId}-3`]);
  });

  it('shows the error of each failed attempt', async () => {
    let calls = 0;
    const { taskId } = await runTask(
      'twice-down',
      () =>
        (calls += 1) <= 2
          ? { status: calls === 1 ? 503 : 429, body: 'busy' }
          : { status: 200, body: { status: 'completed', result: {} } },
      { retry: QUICK_RETRY },
    );
    const task = await waitForTask(taskId);
    expect(task).toMatchObject({ status: 'completed', attempts: 3 });
    expect(task.attemptErrors).toEqual([
      { attempt: 1, code: 'AGENT_UNREACHABLE', message: expect.stringContaining('503'), at: expect.any(String) },
      { attempt: 2, code: 'AGENT_UNREACHABLE', message: expect.stringContaining('429'), at: expect.any(String) },
    ]);
    expect(Date.parse(task.attemptErrors[1].at)).toBeGreaterThanOrEqual(Date.parse(task.attemptErrors[0].at));
  });

  it('ends the task with a report that arrives while the call is still being retried', async () => {
    const { agent, taskId } = await runTask('reply-lost', () => ({ status: 503, body: 'reply lost' }), {
      retry: { maxAttempts: 5, initialIntervalMs: 20_000, maxIntervalMs: 20_000 },
    });
    await waitForTask(taskId, { until: (task) => task.phase === 'retrying' });
    expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { late: true } })).status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'completed',
      result: { late: true },
      attempts: 1,
    });
    expect(server().callsTo('reply-lost')).toHaveLength(1);
  });

  it('fails with AGENT_UNREACHABLE once the retries are used up', async () => {
    const { taskId } = await runTask('down', () => ({ status: 500, body: 'down' }), {
      retry: { ...QUICK_RETRY, maxAttempts: 2 },
    });
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'failed',
      error: { code: 'AGENT_UNREACHABLE' },
      attempts: 2,
    });
    expect(server().callsTo('down')).toHaveLength(2);
  });

  it('fails with AGENT_UNREACHABLE when nothing listens', async () => {
    const agent = await registerAgent({ mcpUrl: 'http://127.0.0.1:9/mcp' });
    const taskId = await startTask({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'x' },
      retry: { ...QUICK_RETRY, maxAttempts: 2 },
    });
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'failed',
      error: { code: 'AGENT_UNREACHABLE', message: expect.stringContaining('127.0.0.1:9') },
    });
  });

  it.each([
    ['not JSON', 200, 'garbage'],
    ['completed without result', 200, { status: 'completed' }],
    ['202 with an unknown status', 202, { status: 'thinking' }],
    ['a redirect', 302, ''],
  ])('fails with AGENT_PROTOCOL_ERROR on %s', async (what, status, body) => {
    const route = `protocol-${what.replace(/\W/g, '')}`;
    const { taskId } = await runTask(route, () => ({ status, body }), { retry: QUICK_RETRY });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'failed', error: { code: 'AGENT_PROTOCOL_ERROR' } });
    expect(server().callsTo(route)).toHaveLength(1);
  });

  it('fails with AGENT_PROTOCOL_ERROR, not retried, on a reply longer than MAX_BODY_BYTES', async () => {
    const huge = { status: 'completed', result: { text: 'x'.repeat(1024 * 1024) } };
    const { taskId } = await runTask('oversized', () => ({ status: 200, body: huge }), { retry: QUICK_RETRY });
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'failed',
      error: {
        code: 'AGENT_PROTOCOL_ERROR',
        message: 'Agent answered HTTP 200 with a body longer than MAX_BODY_BYTES',
      },
      attempts: 1,
    });
    expect(server().callsTo('oversized')).toHaveLength(1);
  });

  it('waits for the report of an agent that answered 202, then fails with AGENT_TIMEOUT', async () => {
    const { taskId } = await runTask('silent', accepts, {
      timeoutMs: 2_000,
    });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'failed', error: { code: 'AGENT_TIMEOUT' } });
    // It failed waiting for the report: the agent's 202 came first.
    const events = (await call('GET', `/tasks/${taskId}/events?format=json`, { apiKey: 'admin' })).body as Array<{
      type: string;
    }>;
    expect(events.map((event) => event.type)).toEqual(['created', 'started', 'accepted', 'failed']);
  });

  it("completes a task that answered 202 with the agent's report; shows progress; a repeat is 200, a different outcome 409", async () => {
    const { agent, taskId } = await runTask('reports-later', () => ({
      status: 202,
      body: { status: 'pending', message: 'working' },
    }));
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' || task.status !== 'pending' });
    const report = (body: unknown, apiKey = agent.apiKey) => call('POST', `/tasks/${taskId}/result`, { apiKey, body });

    expect(await report({ status: 'pending', message: 'half way', progress: 0.5 })).toMatchObject({
      status: 200,
      body: { taskId, status: 'pending' },
    });
    expect(await waitForTask(taskId, { until: (task) => task.progress === 0.5 })).toMatchObject({
      status: 'pending',
      progress: 0.5,
      message: 'half way',
    });
    expect(
      expectError(await report({ status: 'completed', result: 1 }, (await registerAgent()).apiKey), 404, 'NOT_FOUND')
        .message,
    ).toBe(`Task ${taskId} not found`);
    expectError(await report({ status: 'completed' }), 400, 'VALIDATION_ERROR');
    expectError(await report({ status: 'done' }), 400, 'VALIDATION_ERROR');
    expectError(
      await call('POST', '/tasks/no-such-task/result', { apiKey: 'admin', body: { status: 'completed', result: 1 } }),
      404,
      'NOT_FOUND',
    );

    expect(await report({ status: 'completed', result: 42 })).toMatchObject({
      status: 200,
      body: { taskId, status: 'completed' },
    });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { 0: 42 } });
    expect((await report({ status: 'completed', result: 42 })).status).toBe(200);
    expectError(await report({ status: 'completed', result: 43 }), 409, 'CONFLICT');
    expectError(await report({ status: 'failed', error: 'no' }), 409, 'CONFLICT');
  });

  it.each([
    ['an object', { code: 'OPERATION_FAILED', message: 'gave up' }],
    ['a string', 'gave up'],
  ])('takes a failed report with an error that is %s as sent, also from an admin', async (what, error) => {
    const { taskId } = await runTask(`reports-failure-${what.replace(/\W/g, '')}`, () => ({
      status: 202,
      body: { status: 'executing' },
    }));
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' || task.status !== 'pending' });
    expect(
      (await call('POST', `/v1/tasks/${taskId}/result`, { apiKey: 'admin', body: { status: 'failed', error } })).status,
    ).toBe(200);
    expect((await waitForTask(taskId)).error).toEqual(error);
    expect(
      (await call('POST', `/v1/tasks/${taskId}/result`, { apiKey: 'admin', body: { status: 'failed', error } })).status,
    ).toBe(200);
  });

  it('takes only the first of two different reports sent together, answering the other 409', async () => {
    const { agent, taskId } = await runTask('reports-twice', accepts);
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' || task.status !== 'pending' });
    const reports = [
      { status: 'completed', result: { answer: 'first' } },
      { status: 'failed', error: { code: 'OPERATION_FAILED', message: 'second' } },
    ];
    const replies = await Promise.all(
      reports.map((body) => call('POST', `/tasks/${taskId}/result`, { apiKey: agent.apiKey, body })),
    );
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409]);
    const taken = reports[replies.findIndex((reply) => reply.status === 200)];
    expect(await waitForTask(taskId)).toMatchObject(taken);
    expect((await call('POST', `/tasks/${taskId}/result`, { apiKey: agent.apiKey, body: taken })).status).toBe(200);
  });

  it('takes the same outcome with its keys in another order as the same report, before and after the end', async () => {
    const { agent, taskId } = await runTask('reports-reordered', accepts);
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' || task.status !== 'pending' });
    const report = (result: unknown) =>
      call('POST', `/tasks/${taskId}/result`, { apiKey: agent.apiKey, body: { status: 'completed', result } });
    const replies = await Promise.all([
      report({ a: 1, nested: { x: [1, { p: 1, q: 2 }], y: 2 } }),
      report({ nested: { y: 2, x: [1, { q: 2, p: 1 }] }, a: 1 }),
    ]);
    expect(replies.map((reply) => reply.status)).toEqual([200, 200]);
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'completed',
      result: { a: 1, nested: { x: [1, { p: 1, q: 2 }], y: 2 } },
    });
    expect((await report({ nested: { x: [1, { q: 2, p: 1 }], y: 2 }, a: 1 })).status).toBe(200);
    expectError(await report({ nested: { x: [{ q: 2, p: 1 }, 1], y: 2 }, a: 1 }), 409, 'CONFLICT');
  });

  it('gives a cancellation and a report sent together one winner: the other is 409, and the task ends as the winner said', async () => {
    for (let round = 0; round < 4; round += 1) {
      const { agent, taskId } = await runTask(`reports-or-cancel-${round}`, () => ({
        status: 202,
        body: { status: 'received' },
      }));
      await waitForTask(taskId, {
        until: (task) => task.phase === 'awaiting_agent_report' || task.status !== 'pending',
      });
      const [reported, cancelled] = await Promise.all([
        call('POST', `/tasks/${taskId}/result`, {
          apiKey: agent.apiKey,
          body: { status: 'completed', result: { round } },
        }),
        call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' }),
      ]);
      expect({ round, statuses: [reported.status, cancelled.status].sort() }).toEqual({ round, statuses: [200, 409] });
      const ended = await waitForTask(taskId);
      expect({ round, ended: ended.status, result: ended.result }).toEqual(
        reported.status === 200
          ? { round, ended: 'completed', result: { round } }
          : { round, ended: 'cancelled', result: undefined },
      );
    }
  });

  it.each([
    [
      'names another task',
      (taskId: string) => ({ taskId: `${taskId}-other`, status: 'pending', progress: 0.1 }),
      /is not the task of the path/,
    ],
    [
      'is completed with an error',
      () => ({ status: 'completed', result: {}, error: { code: 'X' } }),
      /A completed report carries no error/,
    ],
    [
      'is failed with a result',
      () => ({ status: 'failed', error: 'no', result: 1 }),
      /A failed report carries no result/,
    ],
    [
      'is pending with a result',
      () => ({ status: 'pending', progress: 0.5, result: 1 }),
      /A pending report carries no result/,
    ],
  ])('refuses a report body that %s, which would be dropped', async (_what, body, message) => {
    const { agent, taskId } = await runTask('reports-odd-bodies', () => ({
      status: 202,
      body: { status: 'received' },
    }));
    const reply = await call('POST', `/tasks/${taskId}/result`, { apiKey: agent.apiKey, body: body(taskId) });
    expect(expectError(reply, 400, 'VALIDATION_ERROR').message).toMatch(message);
    expect((await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body.status).toBe('pending');
  });

  it('refuses a failed report whose error is null', async () => {
    const { agent, taskId } = await runTask('reports-null', () => ({ status: 202, body: { status: 'executing' } }));
    expectError(await reportOn(taskId, agent.apiKey, { status: 'failed', error: null }), 400, 'VALIDATION_ERROR');
  });
});
