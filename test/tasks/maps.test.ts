import { acceptsAndHearsCancel, useAgentServer, type AgentBehaviour } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call } from '../support/http';
import { reportOn, tool, waitForTask } from '../support/tasks';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';

/** The source answers `{hits, lang}` of its params; an item answers `{n: 2 × params.n}`, or fails when params.n is negative. */
const mapper: AgentBehaviour = (received) => {
  // A cancellation notice, or an item to report on later.
  if (received.body.cancel || received.body.params.n === 'later') return acceptsAndHearsCancel(received);
  const { params, operation } = received.body;
  if (operation === 'tools/source')
    return { status: 200, body: { status: 'completed', result: { hits: params.hits, lang: params.lang } } };
  if (params.n < 0)
    return { status: 200, body: { status: 'failed', error: { code: 'NEGATIVE', message: `${params.n} is negative` } } };
  return { status: 200, body: { status: 'completed', result: { n: params.n * 2, lang: params.lang } } };
};

describe('maps', () => {
  const server = useAgentServer();
  const client = useTemporalClient();
  let agent: RegisteredAgent;

  beforeAll(async () => {
    agent = await registerAgent({
      mcpUrl: server().route('mapper', mapper),
      capabilities: {
        tools: [
          { ...tool('source'), inputSchema: { type: 'object' } },
          tool('double', { n: { type: ['number', 'string'] }, lang: { type: 'string' } }),
        ],
      },
    });
  });

  /** A composition of a source answering `hits`, and a map of `tools/double` over them. */
  async function mapOver(hits: unknown[], forEach: Record<string, unknown> = {}, dependants: unknown[] = []) {
    const reply = await call('POST', '/tasks/compose', {
      apiKey: 'admin',
      body: [
        { agentId: agent.agentId, operation: 'tools/source', params: { hits, lang: 'en' } },
        {
          agentId: agent.agentId,
          operation: 'tools/double',
          parents: ['0'],
          forEach: { source: { taskId: '0', field: 'hits' }, ...forEach },
          params: { n: { source: { item: true, field: 'n' } }, lang: { source: { taskId: '0', field: 'lang' } } },
        },
        ...dependants,
      ],
    });
    expect(reply.status).toBe(202);
    const [, map, ...others] = reply.body as Array<{ taskId: string; compositionId: string }>;
    return { mapTaskId: map.taskId, compositionId: map.compositionId, dependantIds: others.map((task) => task.taskId) };
  }

  it('completes a map of no items with no results', async () => {
    const { mapTaskId } = await mapOver([]);

    const map = await waitForTask(mapTaskId);

    expect(map).toMatchObject({
      status: 'completed',
      result: { results: [] },
      map: { total: 0, completed: 0, failed: 0, cancelled: 0 },
    });
    expect((await call('GET', `/tasks/${mapTaskId}.0`, { apiKey: 'admin' })).status).toBe(404);
  });

  it("runs a map of one item, whose result a dependant's pending argument reads", async () => {
    const { mapTaskId, dependantIds } = await mapOver([{ n: 21 }], {}, [
      {
        agentId: agent.agentId,
        operation: 'tools/source',
        parents: ['1'],
        params: { hits: { source: { taskId: '1', field: 'results' } }, lang: 'fr' },
      },
    ]);

    expect(await waitForTask(mapTaskId)).toMatchObject({
      status: 'completed',
      result: { results: [{ n: 42, lang: 'en' }] },
    });
    expect(await waitForTask(dependantIds[0])).toMatchObject({
      status: 'completed',
      result: { hits: [{ n: 42, lang: 'en' }], lang: 'fr' },
    });
  });

  it('runs 20 items, each a task of its own with its own event log, the results in element order', async () => {
    const hits = Array.from({ length: 20 }, (_, n) => ({ n }));
    const { mapTaskId, compositionId } = await mapOver(hits, { maxConcurrency: 3 });

    const map = await waitForTask(mapTaskId);

    expect(map).toMatchObject({
      status: 'completed',
      result: { results: hits.map(({ n }) => ({ n: n * 2, lang: 'en' })) },
      map: { total: 20, completed: 20, failed: 0, cancelled: 0 },
      progress: 1,
      message: '20 of 20 items ended',
    });
    expect(map.result.errors).toBeUndefined();
    const item = await call('GET', `/tasks/${mapTaskId}.17`, { apiKey: 'admin' });
    expect(item.status).toBe(200);
    expect(item.body).toMatchObject({
      taskId: `${mapTaskId}.17`,
      status: 'completed',
      result: { n: 34, lang: 'en' },
      mapTaskId,
      itemIndex: 17,
      attempts: 1,
    });
    expect(item.body.compositionId).toBeUndefined();
    const events = await call('GET', `/tasks/${mapTaskId}.17/events?format=json`, { apiKey: 'admin' });
    expect(events.status).toBe(200);
    expect((events.body as Array<{ seq: number; type: string }>).map(({ seq, type }) => [seq, type])).toEqual([
      [1, 'created'],
      [2, 'started'],
      [3, 'completed'],
    ]);
    // The composition lists its own tasks, not the map's items.
    const composition = await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' });
    expect(composition.body.tasks.map((task: { taskId: string }) => task.taskId)).toHaveLength(2);
    expect(composition.body.status).toBe('completed');
  });

  it('under "continue", completes with null for each failed item and lists the failures', async () => {
    const { mapTaskId } = await mapOver([{ n: 1 }, { n: -2 }, { n: 3 }, { x: 4 }], { onItemFailure: 'continue' });

    const map = await waitForTask(mapTaskId);

    expect(map).toMatchObject({
      status: 'completed',
      result: {
        results: [{ n: 2, lang: 'en' }, null, { n: 6, lang: 'en' }, null],
        errors: [
          {
            index: 1,
            taskId: `${mapTaskId}.1`,
            status: 'failed',
            error: { code: 'NEGATIVE', message: '-2 is negative' },
          },
          // An element without the field its item argument reads: failed without a call.
          { index: 3, taskId: `${mapTaskId}.3`, status: 'failed', error: { code: 'MISSING_FIELD' } },
        ],
      },
      map: { total: 4, completed: 2, failed: 2, cancelled: 0 },
      message: '4 of 4 items ended (2 failed)',
    });
    expect(
      server()
        .callsTo('mapper')
        .filter((received) => received.body.taskId === `${mapTaskId}.3`),
    ).toEqual([]);
  });

  it('fails the map at its first failed item by default', async () => {
    const { mapTaskId } = await mapOver([{ n: -1 }], {});

    expect(await waitForTask(mapTaskId)).toMatchObject({
      status: 'failed',
      error: {
        code: 'ITEM_FAILED',
        message: `Item 0 (task ${mapTaskId}.0) failed: -1 is negative`,
        details: { index: 0, taskId: `${mapTaskId}.0`, status: 'failed' },
      },
    });
  });

  it('fails a map over a field that is not an array before any item exists', async () => {
    const reply = await call('POST', '/tasks/compose', {
      apiKey: 'admin',
      body: [
        { agentId: agent.agentId, operation: 'tools/source', params: { hits: 'not a list' } },
        {
          agentId: agent.agentId,
          operation: 'tools/double',
          parents: ['0'],
          forEach: { source: { taskId: '0', field: 'hits' } },
          params: { n: { source: { item: true } } },
        },
      ],
    });
    expect(reply.status).toBe(202);
    const mapTaskId = reply.body[1].taskId as string;

    expect(await waitForTask(mapTaskId)).toMatchObject({ status: 'failed', error: { code: 'TYPE_MISMATCH' } });
    expect((await call('GET', `/tasks/${mapTaskId}.0`, { apiKey: 'admin' })).status).toBe(404);
  });

  it('fails a map over more than MAX_MAP_ITEMS elements before any item exists', async () => {
    const { mapTaskId } = await mapOver(new Array(10_001).fill(0));

    expect(await waitForTask(mapTaskId)).toMatchObject({
      status: 'failed',
      error: { code: 'MAP_TOO_LARGE', details: { elements: 10_001, maxMapItems: 10_000 } },
    });
    expect((await call('GET', `/tasks/${mapTaskId}.0`, { apiKey: 'admin' })).status).toBe(404);
  });

  it("ends a terminated chunk's live items cancelled, and fails its map", async () => {
    const { mapTaskId } = await mapOver([{ n: 'later' }, { n: 'later' }]);
    await until(
      async () =>
        (await call('GET', `/tasks/${mapTaskId}.1`, { apiKey: 'admin' })).body.phase === 'awaiting_agent_report',
      'the items awaiting their reports',
    );

    await client().workflow.getHandle(`map-${mapTaskId}-items-0-1`).terminate('operator test');

    for (const index of [0, 1])
      expect(await waitForTask(`${mapTaskId}.${index}`)).toMatchObject({ status: 'cancelled' });
    expect(await waitForTask(mapTaskId)).toMatchObject({ status: 'failed', error: { code: 'WORKFLOW_ENDED' } });
  });

  it("routes an item's report and cancellation to its chunk's workflow", async () => {
    const { mapTaskId } = await mapOver([{ n: 'later' }, { n: 'later' }, { n: 'later' }], {
      onItemFailure: 'continue',
    });
    const itemId = (index: number) => `${mapTaskId}.${index}`;
    await until(
      async () => (await call('GET', `/tasks/${itemId(2)}`, { apiKey: 'admin' })).status === 200,
      'the items created',
    );
    expect((await waitForTask(mapTaskId, { until: () => true })).phase).toBe('calling_agent');
    for (const index of [0, 1, 2]) {
      const item = await waitForTask(itemId(index), { until: (task) => task.phase === 'awaiting_agent_report' });
      expect(item.phase).toBe('awaiting_agent_report');
    }

    const cancelled = await call('POST', `/tasks/${itemId(1)}/cancel`, { apiKey: 'admin' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ taskId: itemId(1), status: 'cancelled' });
    for (const index of [0, 2]) {
      const reply = await reportOn(itemId(index), agent.apiKey, { status: 'completed', result: { index } });
      expect(reply.status).toBe(200);
    }

    // Its agent heard of the cancelled item.
    await until(
      () =>
        server()
          .callsTo('mapper')
          .some((received) => received.body.cancel && received.body.taskId === itemId(1)),
      'the cancellation notice',
    );
    expect(await waitForTask(mapTaskId)).toMatchObject({
      status: 'completed',
      result: {
        results: [{ index: 0 }, null, { index: 2 }],
        errors: [{ index: 1, taskId: itemId(1), status: 'cancelled' }],
      },
      map: { total: 3, completed: 2, failed: 0, cancelled: 1 },
    });
  });
});
