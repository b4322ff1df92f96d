import { randomUUID } from 'node:crypto';
import { ADMIN_PRINCIPAL } from '../../src/auth/principal';
import {
  IDEMPOTENCY_KEYS_COLLECTION,
  idempotencyClaimId,
  idempotencyRequestHash,
} from '../../src/tasks/idempotency-keys';
import { DEFAULT_RETRY, type CompositionInput } from '../../workflows/task-types';
import { useAgentServer, completes } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { useTestDatabase } from '../support/database';
import { call, expectError } from '../support/http';
import { waitForTask } from '../support/tasks';

/** Idempotency-Key on POST /tasks and POST /tasks/compose: a repeat never runs anything twice. */
describe('Idempotency-Key', () => {
  const server = useAgentServer();
  let agent: RegisteredAgent;
  let key = 0;
  const database = useTestDatabase();
  const freshKey = () => `key-${Date.now()}-${(key += 1)}`;

  beforeAll(async () => {
    agent = await registerAgent({ mcpUrl: server().route('echo', completes({ text: 'ok' })) });
  });

  const task = (text: string) => ({ agentId: agent.agentId, operation: 'tools/echo', params: { text } });
  const post = (path: string, body: unknown, idempotencyKey: string, apiKey = 'admin') =>
    call('POST', path, { apiKey, body, headers: { 'idempotency-key': idempotencyKey } });

  it('answers a repeat of POST /tasks with the same task, run once', async () => {
    const idempotencyKey = freshKey();
    const first = await post('/tasks', task('once'), idempotencyKey);
    expect(first.status).toBe(202);
    await waitForTask(first.body.taskId);
    const repeat = await post('/tasks', task('once'), idempotencyKey);
    expect({ status: repeat.status, body: repeat.body, location: repeat.headers.get('location') }).toEqual({
      status: 202,
      body: first.body,
      location: `/tasks/${first.body.taskId}`,
    });
    expect(server().calls.filter((received) => received.body?.params?.text === 'once')).toHaveLength(1);
  });

  it('starts one task for concurrent identical requests', async () => {
    const idempotencyKey = freshKey();
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => post('/tasks', task('concurrent'), idempotencyKey)),
    );
    expect(replies.map((reply) => reply.status)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(replies.map((reply) => reply.body.taskId)).size).toBe(1);
    // Every answer names a task that exists already: repeats wait for the first request's start.
    expect((await call('GET', `/tasks/${replies[4].body.taskId}`, { apiKey: 'admin' })).status).toBe(200);
    expect(await waitForTask(replies[0].body.taskId)).toMatchObject({ status: 'completed' });
    expect(server().calls.filter((received) => received.body?.params?.text === 'concurrent')).toHaveLength(1);
  });

  it('takes the same body with its members in another order as a repeat', async () => {
    const idempotencyKey = freshKey();
    const first = await post(
      '/tasks',
      { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'reordered' } },
      idempotencyKey,
    );
    expect(first.status).toBe(202);
    const repeat = await post(
      '/tasks',
      { params: { text: 'reordered' }, operation: 'tools/echo', agentId: agent.agentId },
      idempotencyKey,
    );
    expect({ status: repeat.status, body: repeat.body }).toEqual({ status: 202, body: first.body });
  });

  it('answers 409 CONFLICT to the same key with a different body', async () => {
    const idempotencyKey = freshKey();
    expect((await post('/tasks', task('a'), idempotencyKey)).status).toBe(202);
    expectError(await post('/tasks', task('b'), idempotencyKey), 409, 'CONFLICT');
    expectError(await post('/tasks/compose', [task('a')], idempotencyKey), 409, 'CONFLICT');
  });

  it('scopes keys to the caller', async () => {
    const idempotencyKey = freshKey();
    const caller = await registerAgent();
    const mine = await post('/tasks', task('scoped'), idempotencyKey);
    const theirs = await post('/tasks', task('scoped'), idempotencyKey, caller.apiKey);
    expect(theirs.status).toBe(202);
    expect(theirs.body.taskId).not.toBe(mine.body.taskId);
  });

  it('answers a repeat of POST /tasks/compose with the same composition', async () => {
    const idempotencyKey = freshKey();
    const body = [task('composed'), { ...task('composed'), parents: ['0'] }];
    const first = await post('/tasks/compose', body, idempotencyKey);
    expect(first.status).toBe(202);
    const repeat = await post('/tasks/compose', body, idempotencyKey);
    expect({ status: repeat.status, body: repeat.body, location: repeat.headers.get('location') }).toEqual({
      status: 202,
      body: first.body,
      location: first.headers.get('location'),
    });
    await waitForTask(first.body[1].taskId);
    expect(server().calls.filter((received) => received.body?.params?.text === 'composed')).toHaveLength(2);
  });

  it('forgets a key whose request was refused, and refuses a malformed key', async () => {
    const idempotencyKey = freshKey();
    expectError(
      await post('/tasks', { ...task('x'), agentId: 'no-such-agent' }, idempotencyKey),
      404,
      'AGENT_NOT_FOUND',
    );
    expect((await post('/tasks', task('after-refusal'), idempotencyKey)).status).toBe(202);
    expectError(await post('/tasks', task('x'), 'has space'), 400, 'VALIDATION_ERROR');
    expectError(await post('/tasks', task('x'), 'k'.repeat(256)), 400, 'VALIDATION_ERROR');
  });

  it('finishes the launch of a first request that claimed the key and ended before indexing its task', async () => {
    const idempotencyKey = freshKey();
    const body = task('finished-by-repeat');
    const taskId = randomUUID();
    const input: CompositionInput = {
      tasks: [
        {
          taskId,
          agentId: agent.agentId,
          agentName: 'echo',
          operation: 'tools/echo',
          params: body.params,
          parents: [],
          executeOnParentFailure: false,
          timeoutMs: 60_000,
          retry: DEFAULT_RETRY,
          notifyAgent: false,
        },
      ],
      agentCallTimeoutMs: 30_000,
    };
    // The claim as a process killed right after inserting it leaves it: unconfirmed, no task, no workflow.
    await database()
      .collection(IDEMPOTENCY_KEYS_COLLECTION)
      .insertOne({
        _id: idempotencyClaimId(ADMIN_PRINCIPAL, idempotencyKey),
        requestHash: idempotencyRequestHash('task', body),
        taskIds: [taskId],
        createdAt: new Date(Date.now() - 60_000),
        launch: JSON.stringify({ workflowId: `task-${taskId}`, input, origin: {} }),
      } as never);
    const repeat = await post('/tasks', body, idempotencyKey);
    expect({ status: repeat.status, body: repeat.body }).toEqual({ status: 202, body: { taskId, status: 'pending' } });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed' });
    const again = await post('/tasks', body, idempotencyKey);
    expect({ status: again.status, body: again.body }).toEqual({ status: 202, body: { taskId, status: 'pending' } });
    expect(server().calls.filter((received) => received.body?.params?.text === 'finished-by-repeat')).toHaveLength(1);
  });
});
