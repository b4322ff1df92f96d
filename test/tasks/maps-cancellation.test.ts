import { call } from '../support/http';
import { elements, itemIdsOf, useMapAgent, waitForItem, type Element } from '../support/maps';
import { composeTasks, waitForTask } from '../support/tasks';
import { until } from '../support/until';

const awaitingReport = (item: any) => item.phase === 'awaiting_agent_report';
const cancel = (taskId: string) => call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' });

/** POST /tasks/{taskId}/cancel on a map, and on one of its items. */
describe('cancelling a map or one of its items', () => {
  const mapAgent = useMapAgent();

  /** Whether the agent was told that this task is cancelled. */
  const toldOf = (itemId: string) =>
    until(
      () =>
        mapAgent()
          .callsFor(itemId)
          .some((received) => received.body.cancel === true),
      `the cancellation notice of ${itemId}`,
    );

  it('cancels the running and queued items and the map; its dependants fail as those of any cancelled parent', async () => {
    const { list, work, callsFor } = mapAgent();
    const hits: Element[] = elements(6).map((element) => ({ ...element, reply: 'accept' }));
    const { compositionId, taskIds } = await composeTasks([
      list({ hits }),
      work('0', 'hits', { maxConcurrency: 2 }),
      list({ after: 'map' }, { parents: ['1'] }),
    ]);
    const [, mapTaskId, dependant] = taskIds;
    const itemIds = itemIdsOf(mapTaskId, hits.length);
    for (const itemId of itemIds.slice(0, 2)) await waitForItem(itemId, { until: awaitingReport });

    expect(await cancel(mapTaskId)).toMatchObject({ status: 200, body: { taskId: mapTaskId, status: 'cancelled' } });
    expect(await waitForTask(mapTaskId)).toMatchObject({
      status: 'cancelled',
      map: { total: 6, completed: 0, failed: 0, cancelled: 6 },
    });
    for (const itemId of itemIds) expect(await waitForTask(itemId)).toMatchObject({ status: 'cancelled' });
    for (const itemId of itemIds.slice(0, 2)) await toldOf(itemId);
    for (const itemId of itemIds.slice(2)) expect(callsFor(itemId)).toEqual([]);
    expect(await waitForTask(dependant)).toMatchObject({ status: 'failed', error: { code: 'DEPENDENCY_FAILED' } });
    expect((await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' })).body.status).toBe('failed');
    expect((await cancel(mapTaskId)).status).toBe(409);
  });

  it('cancels one item: the agent is told, and a map that continues lists it as cancelled', async () => {
    const { list, work } = mapAgent();
    const hits: Element[] = [{ n: 0 }, { n: 1, reply: 'accept' }, { n: 2 }];
    const { taskIds } = await composeTasks([list({ hits }), work('0', 'hits', { onItemFailure: 'continue' })]);
    const [, mapTaskId] = taskIds;
    const itemIds = itemIdsOf(mapTaskId, hits.length);
    await waitForItem(itemIds[1], { until: awaitingReport });

    expect(await cancel(itemIds[1])).toMatchObject({ status: 200, body: { taskId: itemIds[1], status: 'cancelled' } });
    await toldOf(itemIds[1]);
    expect(await waitForTask(mapTaskId)).toMatchObject({
      status: 'completed',
      map: { total: 3, completed: 2, failed: 0, cancelled: 1 },
      result: {
        results: [{ n: 0 }, null, { n: 2 }],
        errors: [{ index: 1, taskId: itemIds[1], status: 'cancelled' }],
      },
    });
  });
});
