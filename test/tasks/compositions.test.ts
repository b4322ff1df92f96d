import { defaultPayloadConverter } from '@temporalio/common';
import { useAgentServer, type AgentBehaviour } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { tool, waitForTask } from '../support/tasks';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { AGENT_ID_ATTRIBUTE, OPERATION_ATTRIBUTE } from '../../workflows/search-attributes';
import { gate } from '../support/gate';

const PRODUCED = { text: 'hello', count: 3, big: 99, meta: { lang: 'en' }, items: [1, 2] };

/** The answers to calls with `reply: 'held'`, held per tag until the test opens the tag's gate. */
const heldAnswers = new Map<string, ReturnType<typeof gate>>();
const heldAnswer = (tag: string) => {
  if (!heldAnswers.has(tag)) heldAnswers.set(tag, gate());
  return heldAnswers.get(tag)!;
};

/** Answers with its params as result, or as `params.reply` says (fail / produce / held). */
const relay: AgentBehaviour = (received) => {
  const params = received.body.params;
  if (params.reply === 'fail')
    return { status: 200, body: { status: 'failed', error: { code: 'EXECUTION_ERROR', message: 'asked to fail' } } };
  if (params.reply === 'produce') return { status: 200, body: { status: 'completed', result: PRODUCED } };
  return {
    status: 200,
    body: { status: 'completed', result: params },
    heldUntil: params.reply === 'held' ? heldAnswer(params.tag).opened : undefined,
  };
};

const from = (taskId: string, field: string, type?: string) => ({
  source: { taskId, field },
  ...(type ? { type } : {}),
});

describe('compositions', () => {
  const server = useAgentServer();
  let agent: RegisteredAgent;
  const client = useTemporalClient();

  beforeAll(async () => {
    agent = await registerAgent({
      mcpUrl: server().route('relay', relay),
      capabilities: {
        tools: [
          { ...tool('relay'), inputSchema: { type: 'object' } },
          tool('strict', { n: { type: 'number', maximum: 10 } }),
        ],
      },
    });
  });

  const relayTask = (params: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    agentId: agent.agentId,
    operation: 'tools/relay',
    params,
    ...extra,
  });
  const callsTagged = (tag: string) =>
    server()
      .callsTo('relay')
      .filter((received) => received.body.params.tag === tag);

  async function compose(body: unknown[]): Promise<{ compositionId: string; taskIds: string[] }> {
    const reply = await call('POST', '/tasks/compose', { apiKey: 'admin', body });
    expect(reply.status).toBe(202);
    expect(reply.body).toHaveLength(body.length);
    const { compositionId } = reply.body[0];
    for (const element of reply.body)
      expect(element).toEqual({ taskId: expect.any(String), status: 'pending', compositionId });
    return { compositionId, taskIds: reply.body.map((element: { taskId: string }) => element.taskId) };
  }

  const waitAll = (taskIds: string[]) => Promise.all(taskIds.map((taskId) => waitForTask(taskId)));

  it("runs a diamond, substituting pending arguments of each type from parents' results", async () => {
    const { compositionId, taskIds } = await compose([
      relayTask({ tag: 'diamond', reply: 'produce' }),
      relayTask(
        { tag: 'diamond', text: from('0', 'text', 'string'), count: from('0', 'count', 'number') },
        { parents: ['0'] },
      ),
      relayTask(
        { tag: 'diamond', meta: from('0', 'meta', 'object'), items: from('0', 'items', 'array') },
        { parents: ['0'] },
      ),
      relayTask(
        {
          tag: 'diamond',
          text: from('1', 'text', 'string'),
          items: from('2', 'items'),
          lang: from('2', 'meta', 'object'),
        },
        { parents: ['1', '2'] },
      ),
    ]);
    const tasks = await waitAll(taskIds);
    expect(tasks.map((task) => task.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(tasks[1].result).toEqual({ tag: 'diamond', text: 'hello', count: 3 });
    expect(tasks[2].result).toEqual({ tag: 'diamond', meta: { lang: 'en' }, items: [1, 2] });
    expect(tasks[3].result).toEqual({ tag: 'diamond', text: 'hello', items: [1, 2], lang: { lang: 'en' } });
    for (const task of tasks) expect(task.compositionId).toBe(compositionId);

    const calls = callsTagged('diamond');
    expect(calls).toHaveLength(4);
    const callOf = (taskId: string) => calls.find((received) => received.body.taskId === taskId)!;
    expect(callOf(taskIds[3]).receivedAt).toBeGreaterThanOrEqual(
      Math.max(callOf(taskIds[1]).receivedAt, callOf(taskIds[2]).receivedAt),
    );

    const composition = await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' });
    expect(composition.status).toBe(200);
    expect(composition.body).toMatchObject({ compositionId, status: 'completed' });
    expect(composition.body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual(taskIds);
    expect((await call('GET', `/v1/compositions/${compositionId}`, { apiKey: agent.apiKey })).status).toBe(200);
    // To a caller who may not read it, the composition is unknown: the same answer as for an unknown id.
    expect(
      expectError(
        await call('GET', `/compositions/${compositionId}`, { apiKey: (await registerAgent()).apiKey }),
        404,
        'NOT_FOUND',
      ).message,
    ).toBe(`Composition ${compositionId} not found`);
    expect(expectError(await call('GET', '/compositions/unknown', { apiKey: 'admin' }), 404, 'NOT_FOUND').message).toBe(
      'Composition unknown not found',
    );
  });

  it('shows the agent of one task the other tasks of its composition without their results or errors', async () => {
    const other = await registerAgent({
      mcpUrl: server().route('relay', relay),
      capabilities: { tools: [{ ...tool('relay'), inputSchema: { type: 'object' } }] },
    });
    const { compositionId, taskIds } = await compose([
      relayTask({ tag: 'outline', secret: 'only for the creator and agent 0' }),
      { ...relayTask({ tag: 'outline', reply: 'fail' }), agentId: other.agentId },
      { ...relayTask({ tag: 'outline', mine: true }), agentId: other.agentId },
    ]);
    await waitAll(taskIds);

    const full = (await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' })).body;
    expect(
      full.tasks.map((task: { result?: unknown; error?: unknown }) => [
        task.result !== undefined,
        task.error !== undefined,
      ]),
    ).toEqual([
      [true, false],
      [false, true],
      [true, false],
    ]);

    const seenByOther = await call('GET', `/compositions/${compositionId}`, { apiKey: other.apiKey });
    expect(seenByOther.status).toBe(200);
    expect(seenByOther.body.status).toBe('failed');
    expect(seenByOther.body.tasks[0]).toEqual({
      taskId: taskIds[0],
      status: 'completed',
      agentId: agent.agentId,
      operation: 'tools/relay',
      compositionId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(seenByOther.body.tasks[1]).toEqual(full.tasks[1]);
    expect(seenByOther.body.tasks[2]).toEqual(full.tasks[2]);
    expect(
      (await call('GET', `/compositions/${compositionId}`, { apiKey: agent.apiKey })).body.tasks[1].error,
    ).toBeUndefined();
  });

  it('runs tasks without mutual parents at the same time', async () => {
    const { compositionId, taskIds } = await compose([
      relayTask({ tag: 'parallel', reply: 'held' }),
      relayTask({ tag: 'parallel', reply: 'held' }),
    ]);
    // Neither call is answered before both were made: run one after the other, the second never would be.
    await until(() => callsTagged('parallel').length === 2, 'both calls made while neither was answered');
    heldAnswer('parallel').open();
    await waitAll(taskIds);
    const composition = (await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' })).body;
    expect(composition.status).toBe('completed');
  });

  it('shows a dependant calling_agent while its agent holds the call', async () => {
    const { taskIds } = await compose([
      relayTask({ tag: 'phase' }),
      relayTask({ tag: 'phase', reply: 'held' }, { parents: ['0'] }),
    ]);
    await until(() => callsTagged('phase').length === 2, "the dependant's call made");
    expect((await call('GET', `/tasks/${taskIds[1]}`, { apiKey: 'admin' })).body).toMatchObject({
      status: 'pending',
      phase: 'calling_agent',
    });
    heldAnswer('phase').open();
    expect((await waitForTask(taskIds[1])).phase).toBeUndefined();
  });

  it('fails descendants of a failed task with DEPENDENCY_FAILED without calling them, while other branches go on', async () => {
    const { compositionId, taskIds } = await compose([
      relayTask({ tag: 'failing', reply: 'fail' }),
      relayTask({ tag: 'failing', step: 'child' }, { parents: ['0'] }),
      relayTask({ tag: 'failing', step: 'grandchild' }, { parents: ['1'] }),
      relayTask({ tag: 'failing', step: 'independent' }),
      relayTask(
        { tag: 'failing', step: 'regardless', text: from('0', 'text', 'string') },
        { parents: ['0', '3'], executeOnParentFailure: true },
      ),
    ]);
    const tasks = await waitAll(taskIds);
    expect(tasks[0]).toMatchObject({ status: 'failed', error: { code: 'EXECUTION_ERROR', message: 'asked to fail' } });
    expect(tasks[1]).toMatchObject({ status: 'failed', error: { code: 'DEPENDENCY_FAILED' } });
    expect(tasks[2]).toMatchObject({ status: 'failed', error: { code: 'DEPENDENCY_FAILED' } });
    expect(tasks[3]).toMatchObject({ status: 'completed' });
    expect(tasks[4]).toMatchObject({ status: 'completed', result: { tag: 'failing', step: 'regardless', text: null } });
    expect(
      callsTagged('failing')
        .map((received) => received.body.params.step ?? 'root')
        .sort(),
    ).toEqual(['independent', 'regardless', 'root']);
    expect((await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' })).body.status).toBe('failed');
  });

  it('fails a dependant as soon as one parent failed, without waiting for its other parents', async () => {
    const { taskIds } = await compose([
      relayTask({ tag: 'early', reply: 'held' }),
      relayTask({ tag: 'early', reply: 'fail' }),
      relayTask({ tag: 'early', step: 'child' }, { parents: ['0', '1'] }),
    ]);
    const child = await waitForTask(taskIds[2]);
    expect(child).toMatchObject({
      status: 'failed',
      error: { code: 'DEPENDENCY_FAILED', message: expect.stringContaining(taskIds[1]) },
    });
    expect((await call('GET', `/tasks/${taskIds[0]}`, { apiKey: 'admin' })).body.status).toBe('pending');
    heldAnswer('early').open();
    const heldParent = await waitForTask(taskIds[0]);
    expect(heldParent.status).toBe('completed');
    expect(Date.parse(child.updatedAt)).toBeLessThan(Date.parse(heldParent.updatedAt));
    expect(
      callsTagged('early')
        .map((received) => received.body.params.step ?? received.body.params.reply)
        .sort(),
    ).toEqual(['fail', 'held']);
  });

  it('fails a task whose substituted params are wrong: MISSING_FIELD, TYPE_MISMATCH, VALIDATION_ERROR', async () => {
    const { taskIds } = await compose([
      relayTask({ tag: 'substitution', reply: 'produce' }),
      relayTask({ tag: 'substitution', text: from('0', 'absent') }, { parents: ['0'] }),
      relayTask({ tag: 'substitution', text: from('0', 'text', 'number') }, { parents: ['0'] }),
      { agentId: agent.agentId, operation: 'tools/strict', params: { n: from('0', 'big', 'number') }, parents: ['0'] },
      {
        agentId: agent.agentId,
        operation: 'tools/strict',
        params: { n: from('0', 'count', 'integer') },
        parents: ['0'],
      },
    ]);
    const tasks = await waitAll(taskIds);
    expect(tasks[1]).toMatchObject({ status: 'failed', error: { code: 'MISSING_FIELD' } });
    expect(tasks[2]).toMatchObject({
      status: 'failed',
      error: { code: 'TYPE_MISMATCH', details: { expected: 'number', actual: 'string' } },
    });
    expect(tasks[3]).toMatchObject({
      status: 'failed',
      error: { code: 'VALIDATION_ERROR', details: [{ path: '/n', message: 'must be <= 10' }] },
    });
    expect(tasks[4]).toMatchObject({ status: 'completed', result: { n: 3 } });
    expect(callsTagged('substitution')).toHaveLength(1);
  });

  it('lets an operator find a task workflow by its search attributes, and its agent call by its summary', async () => {
    const reply = await call('POST', '/tasks', { apiKey: 'admin', body: relayTask({ tag: 'operator' }) });
    const { taskId } = reply.body;
    await waitForTask(taskId);
    const query = `AgentId = "${agent.agentId}" AND Operation = "tools/relay" AND WorkflowId = "task-${taskId}"`;
    const found: Array<{ workflowId: string; agentId?: string; operation?: string }> = [];
    // Visibility is eventually consistent: look a bounded number of times.
    for (let attempt = 0; attempt < 50 && found.length === 0; attempt += 1) {
      for await (const workflow of client().workflow.list({ query })) {
        found.push({
          workflowId: workflow.workflowId,
          agentId: workflow.typedSearchAttributes.get(AGENT_ID_ATTRIBUTE),
          operation: workflow.typedSearchAttributes.get(OPERATION_ATTRIBUTE),
        });
      }
      if (found.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(found).toEqual([{ workflowId: `task-${taskId}`, agentId: agent.agentId, operation: 'tools/relay' }]);
    const description = await client().workflow.getHandle(`task-${taskId}`).describe();
    expect(await description.staticSummary()).toBe(`${agent.name}: tools/relay`);
    // The agent call is an activity: its scheduled event carries the summary the Web UI shows.
    const { events } = await client().workflow.getHandle(`task-${taskId}`).fetchHistory();
    const calls = (events ?? []).filter(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callAgent',
    );
    expect(
      calls.map(
        (event) => event.userMetadata?.summary && defaultPayloadConverter.fromPayload(event.userMetadata.summary),
      ),
    ).toEqual([`${agent.name}: tools/relay (task ${taskId})`]);
  });
});
