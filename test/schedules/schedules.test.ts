import { ScheduleNotFoundError } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { IDEMPOTENCY_KEYS_COLLECTION, idempotencyClaimId } from '../../src/tasks/idempotency-keys';
import { completes, useAgentServer, type AgentBehaviour } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { newServiceKey } from '../support/keys';
import { createSchedule, deleteSchedule, readSchedule, untilRuns } from '../support/schedules';
import { waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { useTemporalClient } from '../support/temporal';
import { closedStatus } from '../support/until';

/** Completed with the params it was called with. */
const echoes: AgentBehaviour = (received) => ({
  status: 200,
  body: { status: 'completed', result: received.body.params },
});

/** A cron spec whose next run is hours away at most once a day: runs come from trigger only. */
const DAILY = { cron: '0 7 * * *', timezone: 'Europe/Oslo' };

describe('schedules', () => {
  const server = useAgentServer();
  const temporal = useTemporalClient();
  let owner: { id: string; key: string };
  let agent: RegisteredAgent;
  const echo = (text: string) => ({ task: { agentId: agent.agentId, operation: 'tools/echo', params: { text } } });

  beforeAll(async () => {
    owner = await newServiceKey('schedule owner');
    agent = await registerAgent({ mcpUrl: server().route('echo', echoes) }, owner.key);
  });

  it('runs an interval schedule as its creator: each run a task, named in recentRuns', async () => {
    const created = await createSchedule({ spec: { intervalMs: 1_000 }, action: echo('every second') }, owner.key);
    expect(created).toMatchObject({
      spec: { intervalMs: 1_000 },
      action: echo('every second'),
      overlap: 'skip',
      paused: false,
      createdBy: { type: 'SERVICE', id: owner.id },
    });
    try {
      const runs = await untilRuns(created.scheduleId, 2);
      for (const run of runs) {
        expect(run).toEqual({ runId: expect.any(String), at: expect.any(String), taskId: expect.any(String) });
        // Created as the schedule's creator, who reads it like any task of theirs.
        const task = await waitForTask(run.taskId!, { apiKey: owner.key });
        expect(task).toMatchObject({ status: 'completed', agentId: agent.agentId, result: { text: 'every second' } });
      }
      expect(Date.parse(runs[0].at)).toBeGreaterThanOrEqual(Date.parse(runs[1].at));
      // Each launch claimed the run's id as its idempotency key, and freed it once the run was recorded.
      const mongo = await MongoClient.connect(testStack().mongoUri);
      try {
        const claims = mongo.db(testStack().mongoDatabase).collection(IDEMPOTENCY_KEYS_COLLECTION);
        const ids = runs.map((run) => idempotencyClaimId({ kind: 'service', id: owner.id }, run.runId));
        expect(await claims.countDocuments({ _id: { $in: ids } as never })).toBe(0);
      } finally {
        await mongo.close();
      }
      const described = await readSchedule(created.scheduleId, { apiKey: owner.key });
      expect(described.nextRuns.length).toBeGreaterThan(0);
    } finally {
      await deleteSchedule(created.scheduleId);
    }
  });

  it('starts a run at once on trigger, also while paused', async () => {
    const created = await createSchedule({ spec: DAILY, action: echo('triggered'), paused: true }, owner.key);
    const triggered = await call('POST', `/schedules/${created.scheduleId}/trigger`, { apiKey: owner.key });
    expect(triggered).toMatchObject({ status: 202, body: { scheduleId: created.scheduleId } });
    const [run] = await untilRuns(created.scheduleId, 1);
    expect((await waitForTask(run.taskId!)).status).toBe('completed');
    expect((await readSchedule(created.scheduleId)).paused).toBe(true);
    await deleteSchedule(created.scheduleId);
  });

  it('runs a composition: the run names its compositionId and tasks', async () => {
    const composition = [
      echo('first').task,
      {
        ...echo('second').task,
        params: { text: { source: { taskId: '0', field: 'text' }, type: 'string' } },
        parents: ['0'],
      },
    ];
    const created = await createSchedule({ spec: DAILY, action: { composition }, paused: true }, owner.key);
    expect((await call('POST', `/schedules/${created.scheduleId}/trigger`, { apiKey: owner.key })).status).toBe(202);
    const [run] = await untilRuns(created.scheduleId, 1);
    expect(run).toMatchObject({ compositionId: expect.any(String), taskIds: [expect.any(String), expect.any(String)] });
    const second = await waitForTask(run.taskIds![1], { apiKey: owner.key });
    expect(second).toMatchObject({ status: 'completed', result: { text: 'first' }, compositionId: run.compositionId });
    await deleteSchedule(created.scheduleId);
  });

  it('changes a schedule with PATCH: the next run starts the new action', async () => {
    const created = await createSchedule({ spec: DAILY, action: echo('before'), paused: true }, owner.key);
    const patched = await call('PATCH', `/schedules/${created.scheduleId}`, {
      apiKey: owner.key,
      body: { action: echo('after'), overlap: 'allowAll', spec: { cron: '30 6 * * 1-5', timezone: 'UTC' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      action: echo('after'),
      overlap: 'allowAll',
      spec: { cron: '30 6 * * 1-5', timezone: 'UTC' },
      paused: true,
    });
    const described = await readSchedule(created.scheduleId);
    expect(described).toMatchObject({ action: echo('after'), overlap: 'allowAll' });
    for (const next of described.nextRuns) expect(next).toMatch(/T06:30:00\.000Z$/);
    await call('POST', `/schedules/${created.scheduleId}/trigger`, { apiKey: owner.key });
    const [run] = await untilRuns(created.scheduleId, 1);
    expect((await waitForTask(run.taskId!)).result).toEqual({ text: 'after' });

    // A change is checked as a creation is, and a refused one changes nothing.
    expectError(
      await call('PATCH', `/schedules/${created.scheduleId}`, {
        apiKey: owner.key,
        body: { action: { task: { agentId: 'no-such-agent', operation: 'tools/echo', params: {} } } },
      }),
      404,
      'AGENT_NOT_FOUND',
    );
    expectError(
      await call('PATCH', `/schedules/${created.scheduleId}`, { apiKey: owner.key, body: {} }),
      400,
      'VALIDATION_ERROR',
    );
    expect((await readSchedule(created.scheduleId)).action).toEqual(echo('after'));

    // paused through PATCH, as through pause and unpause.
    const unpaused = await call('PATCH', `/schedules/${created.scheduleId}`, {
      apiKey: owner.key,
      body: { paused: false },
    });
    expect(unpaused.body.paused).toBe(false);
    expect((await readSchedule(created.scheduleId)).paused).toBe(false);

    // Paused by an operator in the Web UI: a change that does not name paused keeps it paused.
    await temporal().schedule.getHandle(`schedule-${created.scheduleId}`).pause('by an operator');
    const kept = await call('PATCH', `/schedules/${created.scheduleId}`, {
      apiKey: owner.key,
      body: { overlap: 'skip' },
    });
    expect(kept.body).toMatchObject({ overlap: 'skip', paused: true });
    expect((await readSchedule(created.scheduleId)).paused).toBe(true);
    await deleteSchedule(created.scheduleId);
  });

  it('deletes a schedule: Temporal no longer has it, and it is unknown after', async () => {
    const created = await createSchedule({ spec: { intervalMs: 60_000 }, action: echo('deleted') }, owner.key);
    expect((await call('DELETE', `/schedules/${created.scheduleId}`, { apiKey: owner.key })).status).toBe(204);
    await expect(temporal().schedule.getHandle(`schedule-${created.scheduleId}`).describe()).rejects.toThrow(
      ScheduleNotFoundError,
    );
    expectError(await call('GET', `/schedules/${created.scheduleId}`, { apiKey: owner.key }), 404, 'NOT_FOUND');
    expectError(await call('DELETE', `/schedules/${created.scheduleId}`, { apiKey: owner.key }), 404, 'NOT_FOUND');
    expect(
      (await call('GET', '/schedules?limit=200', { apiKey: owner.key })).body.map(
        (schedule: { scheduleId: string }) => schedule.scheduleId,
      ),
    ).not.toContain(created.scheduleId);
  });

  it('records a run whose agent was deleted as a failed run, and the schedule goes on', async () => {
    const doomed = await registerAgent({ mcpUrl: server().route('doomed', completes({})) }, owner.key);
    const created = await createSchedule(
      { spec: DAILY, action: { task: { agentId: doomed.agentId, operation: 'tools/echo', params: { text: 'x' } } } },
      owner.key,
    );
    expect((await call('DELETE', `/agents/${doomed.agentId}`, { apiKey: owner.key })).status).toBe(204);
    await call('POST', `/schedules/${created.scheduleId}/trigger`, { apiKey: owner.key });
    const [run] = await untilRuns(created.scheduleId, 1);
    expect(run).toEqual({
      runId: expect.any(String),
      at: expect.any(String),
      error: { code: 'AGENT_NOT_FOUND', message: `Agent ${doomed.agentId} not found` },
    });
    // The run failed where an operator looks for it; the schedule still runs.
    const workflow = temporal().workflow.getHandle(run.runId);
    expect(await closedStatus(workflow)).toBe('FAILED');
    await expect(workflow.result()).rejects.toMatchObject({
      cause: { message: `AGENT_NOT_FOUND: Agent ${doomed.agentId} not found` },
    });
    const described = await readSchedule(created.scheduleId);
    expect(described.paused).toBe(false);
    expect(described.nextRuns.length).toBeGreaterThan(0);
    await deleteSchedule(created.scheduleId);
  });

  it('starts nothing for a creator whose key was revoked: the run records UNAUTHENTICATED', async () => {
    const revoked = await newServiceKey('revoked later');
    const created = await createSchedule({ spec: DAILY, action: echo('revoked'), paused: true }, revoked.key);
    expect((await call('DELETE', `/keys/${revoked.id}`, { apiKey: 'admin' })).status).toBe(204);
    expect((await call('POST', `/schedules/${created.scheduleId}/trigger`, { apiKey: 'admin' })).status).toBe(202);
    const [run] = await untilRuns(created.scheduleId, 1);
    expect(run.error).toEqual({
      code: 'UNAUTHENTICATED',
      message: `The schedule's creator, service key ${revoked.id}, was revoked`,
    });
    await deleteSchedule(created.scheduleId);
  });

  describe('access', () => {
    it('answers 404 to everyone but the creator and admins; lists show each caller their own, admins all', async () => {
      const created = await createSchedule({ spec: DAILY, action: echo('mine'), paused: true }, owner.key);
      const other = await newServiceKey('another caller');
      for (const [method, path] of [
        ['GET', ''],
        ['PATCH', ''],
        ['POST', '/pause'],
        ['POST', '/unpause'],
        ['POST', '/trigger'],
        ['DELETE', ''],
      ]) {
        const body = method === 'PATCH' ? { overlap: 'allowAll' } : undefined;
        const reply = await call(method, `/schedules/${created.scheduleId}${path}`, { apiKey: other.key, body });
        expect(expectError(reply, 404, 'NOT_FOUND').message).toBe(`Schedule ${created.scheduleId} not found`);
      }
      expect((await call('GET', '/schedules', { apiKey: other.key })).body).toEqual([]);
      const own = (await call('GET', '/schedules?limit=200', { apiKey: owner.key })).body;
      expect(own.map((schedule: { scheduleId: string }) => schedule.scheduleId)).toContain(created.scheduleId);
      expect((await call('GET', `/schedules/${created.scheduleId}`, { apiKey: 'admin' })).status).toBe(200);
      expect((await readSchedule(created.scheduleId)).overlap).toBe('skip');
      expect((await readSchedule(created.scheduleId)).recentRuns).toEqual([]);
      await deleteSchedule(created.scheduleId);
    });

    it('pages the lists by limit and after, in the order of the ids', async () => {
      const pager = await newServiceKey('pager');
      const pagerAgent = await registerAgent({ mcpUrl: server().route('paged', completes({})) }, pager.key);
      const action = { task: { agentId: pagerAgent.agentId, operation: 'tools/echo', params: { text: 'p' } } };
      const ids: string[] = [];
      for (let count = 0; count < 3; count += 1)
        ids.push((await createSchedule({ spec: DAILY, action, paused: true }, pager.key)).scheduleId);
      const first = await call('GET', '/schedules?limit=2', { apiKey: pager.key });
      const second = await call('GET', `/schedules?limit=2&after=${first.body[1].scheduleId}`, { apiKey: pager.key });
      const paged = [...first.body, ...second.body].map((schedule: { scheduleId: string }) => schedule.scheduleId);
      expect(paged).toEqual([...ids].sort());
      const everyone = await call('GET', '/schedules?limit=200', { apiKey: 'admin' });
      expect(everyone.body.map((schedule: { scheduleId: string }) => schedule.scheduleId)).toEqual(
        expect.arrayContaining(ids),
      );
      expectError(await call('GET', '/schedules?limit=0', { apiKey: pager.key }), 400, 'VALIDATION_ERROR');
      for (const scheduleId of ids) await deleteSchedule(scheduleId);
    });
  });

  it('refuses a schedule beyond MAX_SCHEDULES_PER_CREATOR (100) with 409, and takes one once another is deleted', async () => {
    const busy = await newServiceKey('many schedules');
    const action = echo('many');
    const ids: string[] = [];
    for (let count = 0; count < 100; count += 1)
      ids.push((await createSchedule({ spec: DAILY, action, paused: true }, busy.key)).scheduleId);
    const refused = await call('POST', '/schedules', { apiKey: busy.key, body: { spec: DAILY, action } });
    expect(expectError(refused, 409, 'CONFLICT').message).toMatch(/MAX_SCHEDULES_PER_CREATOR/);
    await deleteSchedule(ids.pop()!);
    ids.push((await createSchedule({ spec: DAILY, action, paused: true }, busy.key)).scheduleId);
    // Admins have no bound: this one is the admin's own.
    const admins = await createSchedule({ spec: DAILY, action, paused: true });
    for (const scheduleId of [...ids, admins.scheduleId]) await deleteSchedule(scheduleId);
  });

  describe('bad bodies', () => {
    const AGENT = 'the-registered-agent';
    const task = (overrides: Record<string, unknown> = {}) => ({
      agentId: AGENT,
      operation: 'tools/echo',
      params: { text: 'hi' },
      ...overrides,
    });
    it.each<[string, Record<string, unknown>, number, string, string | null]>([
      ['no spec', { action: { task: task() } }, 400, 'VALIDATION_ERROR', '/'],
      ['no action', { spec: DAILY }, 400, 'VALIDATION_ERROR', '/'],
      [
        'a cron of four fields',
        { spec: { cron: '0 7 * *' }, action: { task: task() } },
        400,
        'VALIDATION_ERROR',
        '/spec/cron',
      ],
      [
        'a minute out of range',
        { spec: { cron: '61 7 * * *' }, action: { task: task() } },
        400,
        'VALIDATION_ERROR',
        '/spec',
      ],
      [
        'an unknown time zone',
        { spec: { cron: '0 7 * * *', timezone: 'Mars/Olympus' }, action: { task: task() } },
        400,
        'VALIDATION_ERROR',
        '/spec/timezone',
      ],
      [
        'a composition over MAX_COMPOSITION_SIZE (100)',
        { spec: DAILY, action: { composition: Array.from({ length: 101 }, () => task()) } },
        413,
        'PAYLOAD_TOO_LARGE',
        null,
      ],
      [
        'a time zone without cron',
        { spec: { intervalMs: 5_000, timezone: 'UTC' }, action: { task: task() } },
        400,
        'VALIDATION_ERROR',
        '/spec',
      ],
      [
        'cron and intervalMs',
        { spec: { cron: '0 7 * * *', intervalMs: 5_000 }, action: { task: task() } },
        400,
        'VALIDATION_ERROR',
        '/spec',
      ],
      [
        'an interval under a second',
        { spec: { intervalMs: 999 }, action: { task: task() } },
        400,
        'VALIDATION_ERROR',
        '/spec/intervalMs',
      ],
      [
        'an unknown overlap',
        { spec: DAILY, action: { task: task() }, overlap: 'sometimes' },
        400,
        'VALIDATION_ERROR',
        '/overlap',
      ],
      [
        'two actions',
        { spec: DAILY, action: { task: task(), composition: [task()] } },
        400,
        'VALIDATION_ERROR',
        '/action',
      ],
      ['an unknown member', { spec: DAILY, action: { task: task() }, when: 'now' }, 400, 'VALIDATION_ERROR', '/'],
      [
        'params the tool refuses',
        { spec: DAILY, action: { task: task({ params: { text: 7 } }) } },
        400,
        'VALIDATION_ERROR',
        '/text',
      ],
      [
        'an unknown operation',
        { spec: DAILY, action: { task: task({ operation: 'tools/nope' }) } },
        400,
        'OPERATION_NOT_SUPPORTED',
        null,
      ],
      [
        'an unknown agent',
        { spec: DAILY, action: { task: task({ agentId: 'no-such-agent' }) } },
        404,
        'AGENT_NOT_FOUND',
        null,
      ],
      [
        'a composition with a cycle',
        { spec: DAILY, action: { composition: [task({ parents: ['1'] }), task({ parents: ['0'] })] } },
        400,
        'INVALID_COMPOSITION',
        null,
      ],
    ])('refuses %s, and creates nothing', async (_name, body, status, code, path) => {
      const caller = await newServiceKey('bad bodies');
      const sent = JSON.parse(JSON.stringify(body).replaceAll(AGENT, agent.agentId));
      // The owner's agent is visible to every caller (registered public).
      const error = expectError(await call('POST', '/schedules', { apiKey: caller.key, body: sent }), status, code);
      if (path) expect(error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
      expect((await call('GET', '/schedules', { apiKey: caller.key })).body).toEqual([]);
    });

    it('refuses an agent the creator cannot see, as POST /tasks does', async () => {
      const hidden = await registerAgent(
        { mcpUrl: server().route('hidden', completes({})), visibility: 'private' },
        owner.key,
      );
      const caller = await newServiceKey('no access');
      const action = { task: { agentId: hidden.agentId, operation: 'tools/echo', params: { text: 'x' } } };
      expectError(await call('POST', '/tasks', { apiKey: caller.key, body: action.task }), 404, 'AGENT_NOT_FOUND');
      expectError(
        await call('POST', '/schedules', { apiKey: caller.key, body: { spec: DAILY, action } }),
        404,
        'AGENT_NOT_FOUND',
      );
    });
  });
});
