import { call } from '../support/http';
import { itemIdsOf, useMapAgent, waitForItem, type Element } from '../support/maps';
import { composeTasks, reportOn, waitForTask } from '../support/tasks';
import { until } from '../support/until';

/** A map's item is a task like any other: its own view, events, reports and input requests. */
describe("a map's items as tasks", () => {
  const mapAgent = useMapAgent();

  it('takes a 202 and then the report, and an input request answered by a person, each on its item', async () => {
    const { agent, list, work, callsFor } = mapAgent();
    const hits: Element[] = [{ n: 0, reply: 'accept' }, { n: 1, reply: 'accept' }, { n: 2 }];
    const { compositionId, taskIds } = await composeTasks([list({ hits }), work('0', 'hits')]);
    const [, mapTaskId] = taskIds;
    const [reported, asking, plain] = itemIdsOf(mapTaskId, hits.length);
    const awaitingReport = (item: any) => item.phase === 'awaiting_agent_report';
    const seen = await waitForItem(reported, { until: awaitingReport });
    expect(seen).toMatchObject({
      taskId: reported,
      status: 'pending',
      mapTaskId,
      itemIndex: 0,
      agentId: agent.agentId,
      operation: 'tools/work',
    });
    expect(seen.compositionId).toBeUndefined();
    expect(callsFor(reported)).toEqual([
      expect.objectContaining({ body: expect.objectContaining({ taskId: reported, params: { element: hits[0] } }) }),
    ]);
    expect(await waitForTask(plain)).toMatchObject({ status: 'completed', result: { n: 2 }, itemIndex: 2 });
    // The map shows how far it got while its items run (its counts as of its last chunk that ended).
    const running = await waitForTask(mapTaskId, { until: () => true });
    expect(running).toMatchObject({
      status: 'pending',
      map: { total: 3, completed: 0, failed: 0, cancelled: 0 },
      message: expect.any(String),
      progress: expect.anything(),
    });

    expect((await reportOn(reported, agent.apiKey, { status: 'completed', result: { late: 0 } })).status).toBe(200);
    expect(await waitForTask(reported)).toMatchObject({ status: 'completed', result: { late: 0 } });

    await waitForTask(asking, { until: awaitingReport });
    const asked = await reportOn(asking, agent.apiKey, { status: 'input-required', message: 'Which one?' });
    expect(asked.status).toBe(200);
    expect(await waitForTask(asking, { until: (item) => item.status === 'input-required' })).toMatchObject({
      status: 'input-required',
      inputRequest: { requestId: asked.body.requestId, message: 'Which one?' },
    });
    const answered = await call('POST', `/tasks/${asking}/input`, { apiKey: 'admin', body: { input: { pick: 1 } } });
    expect(answered.status).toBe(200);
    await until(() => callsFor(asking).some((received) => received.body.input !== undefined), 'the input');
    expect((await reportOn(asking, agent.apiKey, { status: 'completed', result: { picked: 1 } })).status).toBe(200);

    expect(await waitForTask(mapTaskId)).toMatchObject({
      status: 'completed',
      map: { total: 3, completed: 3, failed: 0, cancelled: 0 },
      result: { results: [{ late: 0 }, { picked: 1 }, { n: 2 }] },
    });
    const events = await call('GET', `/tasks/${asking}/events?format=json`, { apiKey: 'admin' });
    expect(events.body.map((event: { type: string }) => event.type)).toEqual([
      'created',
      'started',
      'accepted',
      'input_required',
      'input_received',
      'completed',
    ]);
    expect((await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' })).body.status).toBe('completed');
  });
});
