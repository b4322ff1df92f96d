import { MongoClient } from 'mongodb';
import { useAgentServer, completes } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { tool, waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';

/** Checks of POST /tasks and POST /tasks/compose, all done before anything starts; and who may read a task. */
describe('task requests', () => {
  const server = useAgentServer();
  let agent: RegisteredAgent;
  let mongo: MongoClient;
  // Only this file's agent: other test files create tasks at the same time.
  const taskCount = () =>
    mongo.db(testStack().mongoDatabase).collection('tasks').countDocuments({ agentId: agent.agentId });

  beforeAll(async () => {
    mongo = await MongoClient.connect(testStack().mongoUri);
    agent = await registerAgent({
      mcpUrl: server().route('echo', completes({ text: 'ok' })),
      capabilities: {
        tools: [tool('echo', { text: { type: 'string' }, times: { type: 'integer', minimum: 1 } }, ['text'])],
        prompts: [{ name: 'greet' }],
      },
    });
  });
  afterAll(async () => {
    await mongo.close();
  });

  // Tables of it.each are built before beforeAll ran: the registered agent's id is filled in when sent.
  const THE_AGENT = 'the-registered-agent';
  const task = (overrides: Record<string, unknown> = {}) => ({
    agentId: THE_AGENT,
    operation: 'tools/echo',
    params: { text: 'hi' },
    ...overrides,
  });
  const send = (body: unknown) => JSON.parse(JSON.stringify(body).replaceAll(THE_AGENT, agent.agentId));

  describe('POST /tasks', () => {
    it('answers 202 {taskId, status: pending} with a Location, bare and under /v1', async () => {
      for (const path of ['/tasks', '/v1/tasks']) {
        const reply = await call('POST', path, { apiKey: 'admin', body: send(task()) });
        expect(reply.status).toBe(202);
        expect(reply.body).toEqual({ taskId: expect.any(String), status: 'pending' });
        expect(reply.headers.get('location')).toBe(`/tasks/${reply.body.taskId}`);
        expect(await waitForTask(reply.body.taskId)).toMatchObject({
          status: 'completed',
          agentId: agent.agentId,
          operation: 'tools/echo',
        });
      }
    });

    it('runs an operation of a capability without an inputSchema', async () => {
      const reply = await call('POST', '/tasks', {
        apiKey: 'admin',
        body: send(task({ operation: 'prompts/greet', params: { anything: true } })),
      });
      expect(reply.status).toBe(202);
    });

    it.each([
      ['an unknown agent', { agentId: 'no-such-agent' }, 404, 'AGENT_NOT_FOUND'],
      ['an operation without a slash', { operation: 'echo' }, 400, 'VALIDATION_ERROR'],
      ['an unknown capability', { operation: 'skills/echo' }, 400, 'VALIDATION_ERROR'],
      ['an unregistered tool', { operation: 'tools/translate' }, 400, 'OPERATION_NOT_SUPPORTED'],
      ['an unregistered prompt', { operation: 'prompts/farewell' }, 400, 'OPERATION_NOT_SUPPORTED'],
      ['an unregistered tools/__proto__', { operation: 'tools/__proto__' }, 400, 'OPERATION_NOT_SUPPORTED'],
      ['an unregistered tools/constructor', { operation: 'tools/constructor' }, 400, 'OPERATION_NOT_SUPPORTED'],
      ['a capability named __proto__', { operation: '__proto__/echo' }, 400, 'VALIDATION_ERROR'],
      ['a capability named constructor', { operation: 'constructor/echo' }, 400, 'VALIDATION_ERROR'],
      ['missing params', { params: undefined }, 400, 'VALIDATION_ERROR'],
      ['params that are an array', { params: [] }, 400, 'VALIDATION_ERROR'],
      ['an unknown field', { priority: 1 }, 400, 'VALIDATION_ERROR'],
      ['a timeoutMs above the maximum', { timeoutMs: 365 * 24 * 3_600_000 }, 400, 'VALIDATION_ERROR'],
      ['a retry policy with zero attempts', { retry: { maxAttempts: 0 } }, 400, 'VALIDATION_ERROR'],
      ['a retry interval above the default cap', { retry: { initialIntervalMs: 60_000 } }, 400, 'VALIDATION_ERROR'],
      [
        'a pending argument outside a composition',
        { params: { text: { source: { taskId: '0', field: 'text' } } } },
        400,
        'VALIDATION_ERROR',
      ],
      ['parents outside a composition', { parents: [] }, 400, 'VALIDATION_ERROR'],
      ['a callbackUrl without a host', { callbackUrl: 'http://' }, 400, 'VALIDATION_ERROR'],
      ['a callbackUrl with an empty host', { callbackUrl: 'http:///hook' }, 400, 'VALIDATION_ERROR'],
    ])('refuses %s', async (_what, overrides, status, code) => {
      const before = await taskCount();
      expectError(await call('POST', '/tasks', { apiKey: 'admin', body: send(task(overrides)) }), status, code);
      expect(await taskCount()).toBe(before);
    });

    it('refuses params failing the inputSchema with the Ajv problems as details', async () => {
      const error = expectError(
        await call('POST', '/tasks', { apiKey: 'admin', body: send(task({ params: { text: 'hi', times: 0 } })) }),
        400,
        'VALIDATION_ERROR',
      );
      expect(error.details).toEqual([{ path: '/times', message: 'must be >= 1' }]);
      const missing = expectError(
        await call('POST', '/tasks', { apiKey: 'admin', body: send(task({ params: {} })) }),
        400,
        'VALIDATION_ERROR',
      );
      expect(missing.message).toContain('text');
    });

    it('does not admit a private agent exists to those who may not see it', async () => {
      const hidden = await registerAgent({ visibility: 'private' });
      const caller = await registerAgent();
      expectError(
        await call('POST', '/tasks', { apiKey: caller.apiKey, body: send(task({ agentId: hidden.agentId })) }),
        404,
        'AGENT_NOT_FOUND',
      );
    });

    it('needs a credential', async () => {
      expectError(await call('POST', '/tasks', { body: send(task()) }), 401, 'UNAUTHENTICATED');
    });
  });

  describe('GET /tasks/{taskId}', () => {
    it('lets the creator, the executing agent and admins read a task; to others it is unknown (404, as an unknown id)', async () => {
      const creator = await registerAgent();
      const stranger = await registerAgent();
      const reply = await call('POST', '/tasks', { apiKey: creator.apiKey, body: send(task()) });
      expect(reply.status).toBe(202);
      const { taskId } = reply.body;
      for (const apiKey of [creator.apiKey, agent.apiKey, 'admin']) {
        expect((await call('GET', `/tasks/${taskId}`, { apiKey })).status).toBe(200);
      }
      expect(
        expectError(await call('GET', `/tasks/${taskId}`, { apiKey: stranger.apiKey }), 404, 'NOT_FOUND').message,
      ).toBe(`Task ${taskId} not found`);
      expect(
        expectError(await call('GET', '/v1/tasks/no-such-task', { apiKey: 'admin' }), 404, 'NOT_FOUND').message,
      ).toBe('Task no-such-task not found');
      expectError(await call('GET', `/tasks/${taskId}`), 401, 'UNAUTHENTICATED');
    });
  });

  describe('POST /tasks/compose', () => {
    const element = (parents?: string[], params: Record<string, unknown> = { text: 'hi' }) =>
      task({ params, ...(parents ? { parents } : {}) });
    const fromParent = (taskId: string) => ({ source: { taskId, field: 'text' }, type: 'string' });

    it.each([
      ['a parent index out of range', [element(), element(['5'])], /Task 1: parent "5"/],
      ['a parent that is not an index', [element(['first'])], /Task 0: parent "first"/],
      ['a self-reference', [element(), element(['1'])], /Task 1: lists itself/],
      ['a cycle', [element(['2']), element(['0']), element(['1'])], /Task 0: .*cycle/],
      [
        'a pending argument whose source is not a parent',
        [element(), element(), element(['0'], { text: fromParent('1') })],
        /Task 2: param "text"/,
      ],
    ])('refuses %s with 400 INVALID_COMPOSITION naming the element', async (_what, body, message) => {
      const before = await taskCount();
      const error = expectError(
        await call('POST', '/tasks/compose', { apiKey: 'admin', body: send(body) }),
        400,
        'INVALID_COMPOSITION',
      );
      expect(error.message).toMatch(message);
      expect(await taskCount()).toBe(before);
    });

    it.each([
      ['an unknown agent', [element(), task({ agentId: 'nobody' })], 404, 'AGENT_NOT_FOUND', /Task 1/],
      [
        'an unregistered operation',
        [element(), element(), task({ operation: 'tools/nope' })],
        400,
        'OPERATION_NOT_SUPPORTED',
        /Task 2/,
      ],
      ['literal params failing the inputSchema', [task({ params: { text: 3 } })], 400, 'VALIDATION_ERROR', /Task 0/],
      [
        'an unknown pending-argument type',
        [element(), element(['0'], { text: { source: { taskId: '0', field: 'text' }, type: 'date' } })],
        400,
        'VALIDATION_ERROR',
        /Task 1/,
      ],
      ['an empty array', [], 400, 'VALIDATION_ERROR', /composition/],
      ['an object instead of an array', { tasks: [] }, 400, 'VALIDATION_ERROR', /composition/],
    ])('refuses %s', async (_what, body, status, code, message) => {
      const before = await taskCount();
      expect(
        expectError(await call('POST', '/tasks/compose', { apiKey: 'admin', body: send(body) }), status, code).message,
      ).toMatch(message);
      expect(await taskCount()).toBe(before);
    });

    it('refuses more than MAX_COMPOSITION_SIZE tasks with 413', async () => {
      const body = Array.from({ length: 101 }, () => element());
      expectError(
        await call('POST', '/v1/tasks/compose', { apiKey: 'admin', body: send(body) }),
        413,
        'PAYLOAD_TOO_LARGE',
      );
    });
  });
});
