import { randomUUID } from 'node:crypto';
import { useAgentServer, type AgentBehaviour } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { postA2a } from '../support/a2a-rpc';
import { useEventStreams } from '../support/event-stream';
import { call, expectError } from '../support/http';
import { scrape, valueOf } from '../support/prometheus';
import { tool, waitForTask } from '../support/tasks';
import { until } from '../support/until';

/** Completes with its params as its result. */
const relay: AgentBehaviour = (received) => ({
  status: 200,
  body: { status: 'completed', result: received.body.params },
});

const when = (taskId: string, field: string, schema: Record<string, unknown>) => ({
  source: { taskId, field },
  schema,
});
const from = (taskId: string, field: string) => ({ source: { taskId, field } });

/** Tasks of a composition that run only if a parent's value matches a schema (`when`), else end `skipped`. */
describe('conditions in compositions', () => {
  const server = useAgentServer();
  const openStream = useEventStreams();
  let agent: RegisteredAgent;

  beforeAll(async () => {
    agent = await registerAgent({
      mcpUrl: server().route('conditional', relay),
      capabilities: { tools: [{ ...tool('relay'), inputSchema: { type: 'object' } }] },
    });
  });

  const task = (tag: string, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
    agentId: agent.agentId,
    operation: 'tools/relay',
    params: { tag, ...params },
    ...extra,
  });
  const callsTagged = (tag: string) =>
    server()
      .callsTo('conditional')
      .filter((received) => received.body.params?.tag === tag);

  async function compose(body: unknown[]): Promise<{ compositionId: string; taskIds: string[] }> {
    const reply = await call('POST', '/tasks/compose', { apiKey: 'admin', body });
    expect(reply.status).toBe(202);
    return {
      compositionId: reply.body[0].compositionId,
      taskIds: reply.body.map((element: { taskId: string }) => element.taskId),
    };
  }

  it('runs a task whose condition holds, and skips one whose condition fails without calling its agent', async () => {
    const hook = server().route('skipped-hook', () => ({ status: 200, body: {} }));
    const { compositionId, taskIds } = await compose([
      task('source', { score: 7, review: { flagged: false } }),
      task('met', {}, { parents: ['0'], when: when('0', 'score', { type: 'number', minimum: 5 }) }),
      task('unmet', {}, { parents: ['0'], when: when('0', '/review/flagged', { const: true }), callbackUrl: hook }),
    ]);
    const [, met, unmet] = await Promise.all(taskIds.map((taskId) => waitForTask(taskId)));

    expect(met).toMatchObject({ status: 'completed', result: { tag: 'met' } });
    const skipReason = {
      code: 'CONDITION_NOT_MET',
      message: 'Field "/review/flagged" of task 0 does not match the condition: / must be equal to constant',
      details: [{ path: '/', message: 'must be equal to constant' }],
    };
    expect(unmet).toEqual({
      taskId: taskIds[2],
      status: 'skipped',
      skipReason,
      agentId: agent.agentId,
      operation: 'tools/relay',
      compositionId,
      dependsOn: [taskIds[0]],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(callsTagged('met')).toHaveLength(1);
    expect(callsTagged('unmet')).toEqual([]);

    // Its event log ends with the skipped event, which carries the reason.
    const events = await call('GET', `/tasks/${taskIds[2]}/events?format=json`, { apiKey: 'admin' });
    expect(events.status).toBe(200);
    expect(events.body.map((event: { type: string }) => event.type)).toEqual(['created', 'skipped']);
    expect(events.body[1]).toMatchObject({ taskId: taskIds[2], type: 'skipped', skipReason });
    // Its stream, like the composition's, gives the same events and closes after the end.
    const stream = await openStream(`/tasks/${taskIds[2]}/events`);
    await stream.closedWithin();
    expect(stream.data).toEqual(events.body);
    const compositionStream = await openStream(`/compositions/${compositionId}/events`);
    await compositionStream.closedWithin();
    expect(compositionStream.data.filter((event) => event.taskId === taskIds[2])).toEqual(events.body);

    // The callback tells of the skip.
    const [callback] = await until(() => {
      const received = server().callsTo('skipped-hook');
      return received.length > 0 && received;
    }, 'the callback of the skipped task');
    expect(callback.body).toEqual({
      taskId: taskIds[2],
      status: 'skipped',
      skipReason,
      agentId: agent.agentId,
      operation: 'tools/relay',
      completedAt: expect.any(String),
    });

    // A composition whose tasks completed or were skipped completed; it lists the skipped task.
    const composition = await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' });
    expect(composition.status).toBe(200);
    expect(composition.body.status).toBe('completed');
    expect(composition.body.tasks.map((view: { status: string }) => view.status)).toEqual([
      'completed',
      'completed',
      'skipped',
    ]);
    expect(composition.body.tasks[2].skipReason).toEqual(skipReason);

    // A2A: the agent decided not to perform it, a terminal state; ListTasks finds it by that state.
    const rpc = (method: string, params: unknown) =>
      postA2a(`/a2a/${agent.agentId}`, { apiKey: 'admin', body: { jsonrpc: '2.0', id: 1, method, params } });
    const a2a = await rpc('GetTask', { id: taskIds[2] });
    expect(a2a.body.result.status).toMatchObject({
      state: 'TASK_STATE_REJECTED',
      message: { parts: [{ data: skipReason }] },
    });
    const rejected = await rpc('ListTasks', { status: 'TASK_STATE_REJECTED', pageSize: 100 });
    expect(rejected.body.result.tasks.map((listed: { id: string }) => listed.id)).toContain(taskIds[2]);
  });

  it("skips the dependants of a skipped task, runs one that sets runIfParentSkipped with null for the skipped parent's arguments, and skips a task whose condition reads a missing field", async () => {
    const { taskIds } = await compose([
      task('root', { answer: 'no' }),
      task('asked', {}, { parents: ['0'], when: when('0', 'answer', { const: 'yes' }) }),
      task('after-asked', { asked: from('1', 'tag') }, { parents: ['1'] }),
      task(
        'anyway',
        { asked: from('1', 'tag'), answer: from('0', 'answer') },
        { parents: ['0', '1'], runIfParentSkipped: true },
      ),
      task('missing', {}, { parents: ['0'], when: when('0', 'verdict', { type: 'string' }) }),
    ]);
    const [, asked, afterAsked, anyway, missing] = await Promise.all(taskIds.map((taskId) => waitForTask(taskId)));

    expect(asked).toMatchObject({ status: 'skipped', skipReason: { code: 'CONDITION_NOT_MET' } });
    expect(afterAsked).toMatchObject({
      status: 'skipped',
      skipReason: { code: 'PARENT_SKIPPED', message: `Parent task 1 (${taskIds[1]}) was skipped` },
    });
    expect(anyway).toMatchObject({ status: 'completed', result: { tag: 'anyway', asked: null, answer: 'no' } });
    expect(missing).toMatchObject({
      status: 'skipped',
      skipReason: {
        code: 'MISSING_FIELD',
        message: 'The condition reads field "verdict" of task 0, whose result has no such field',
      },
    });
    expect(['asked', 'after-asked', 'missing'].flatMap(callsTagged)).toEqual([]);
  });

  it('counts a skipped task in acs_tasks_ended_total, labelled with why it was skipped', async () => {
    // An operation of this test alone: other files' tasks run beside it.
    const name = `when_${randomUUID().slice(0, 8)}`;
    const counted = await registerAgent({
      mcpUrl: server().route(name, relay),
      capabilities: { tools: [{ ...tool(name), inputSchema: { type: 'object' } }] },
    });
    const operation = `tools/${name}`;
    const { taskIds } = await compose([
      { agentId: counted.agentId, operation, params: { go: false } },
      { agentId: counted.agentId, operation, params: {}, parents: ['0'], when: when('0', 'go', { const: true }) },
    ]);
    expect(await waitForTask(taskIds[1])).toMatchObject({ status: 'skipped' });

    const skippedCount = async () =>
      valueOf((await scrape()).samples, 'acs_tasks_ended_total', {
        operation,
        status: 'skipped',
        code: 'CONDITION_NOT_MET',
      });
    expect(await until(async () => (await skippedCount()) === 1, 'the skipped task counted')).toBe(true);
  });

  it('refuses a condition that reads no parent, a schema that cannot be used, and a condition outside a composition', async () => {
    const refused = async (body: unknown, path = '/tasks/compose', code = 'VALIDATION_ERROR') =>
      expectError(await call('POST', path, { apiKey: 'admin', body }), 400, code);

    expect(
      (
        await refused(
          [task('a'), task('b'), task('c', {}, { parents: ['0'], when: when('1', 'tag', { type: 'string' }) })],
          '/tasks/compose',
          'INVALID_COMPOSITION',
        )
      ).message,
    ).toBe('Task 2: its condition (when) reads task "1", which is not among its parents');
    const badSchema = await refused([
      task('a'),
      task('b', {}, { parents: ['0'], when: when('0', 'tag', { properties: { x: { type: 'strin' } } }) }),
    ]);
    expect(badSchema.message).toMatch(/^Task 1: the schema of its condition \(when\) cannot be used: /);
    const costly = await refused([
      task('a'),
      task('b', {}, { parents: ['0'], when: when('0', 'tag', { $dynamicRef: '#x' }) }),
    ]);
    expect(costly.details).toEqual({ pointer: '/$dynamicRef' });
    await refused([task('a'), task('b', {}, { parents: ['0'], when: { source: { taskId: '0' }, schema: {} } })]);
    await refused([task('a'), task('b', {}, { parents: ['0'], when: when('0', 'tag', {}), runIfParentSkipped: 1 })]);
    await refused(task('single', {}, { when: when('0', 'tag', {}) }), '/tasks');
    expect(['a', 'b', 'c', 'single'].flatMap(callsTagged)).toEqual([]);
  });
});
