import { useTestDatabase } from '../support/database';
import { call } from '../support/http';
import { elements, itemIdsOf, storedStatuses, useMapAgent, type Element } from '../support/maps';
import { composeTasks, waitForTask } from '../support/tasks';
import { until } from '../support/until';

/** Beyond the first chunk of 256 items: its items are never reached when the map fails early. */
const ITEMS = 300;

/** What a map does when some of its items fail: `onItemFailure` "continue", and "fail" (the default). */
describe('failed items of a map', () => {
  const mapAgent = useMapAgent();
  const db = useTestDatabase();

  it('with "continue", completes with null for each failed item and lists them in errors by index', async () => {
    const { list, work } = mapAgent();
    const hits: Element[] = elements(8).map((element) =>
      [1, 4, 7].includes(element.n) ? { ...element, reply: 'fail' } : element,
    );
    const { compositionId, taskIds } = await composeTasks([
      list({ hits }),
      work('0', 'hits', { maxConcurrency: 3, onItemFailure: 'continue' }),
    ]);
    const [, mapTaskId] = taskIds;
    const map = await waitForTask(mapTaskId);
    const itemIds = itemIdsOf(mapTaskId, hits.length);
    const failure = (n: number) => ({
      index: n,
      taskId: itemIds[n],
      status: 'failed',
      error: { code: 'EXECUTION_ERROR', message: `element ${n} failed` },
    });

    expect(map).toMatchObject({
      status: 'completed',
      map: { total: 8, completed: 5, failed: 3, cancelled: 0 },
      result: {
        results: [{ n: 0 }, null, { n: 2 }, { n: 3 }, null, { n: 5 }, { n: 6 }, null],
        errors: [failure(1), failure(4), failure(7)],
      },
    });
    expect(await waitForTask(itemIds[4])).toMatchObject({ status: 'failed', error: failure(4).error });
    expect(await storedStatuses(db(), itemIds)).toEqual({ completed: 5, failed: 3 });
    expect((await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' })).body.status).toBe('completed');
  });

  it('by default, fails at the first failed item: ITEM_FAILED, running items cancelled and told, unreached items never created', async () => {
    const { list, work, release, callsFor } = mapAgent();
    // Items 0 and 1 take their tasks (202); item 2 fails once both await their reports.
    const hits: Element[] = elements(ITEMS).map((element) => {
      if (element.n < 2) return { ...element, reply: 'accept' };
      if (element.n === 2) return { ...element, reply: 'fail', heldBy: 'first-failure' };
      return element;
    });
    const { compositionId, taskIds } = await composeTasks([
      list({ hits }),
      work('0', 'hits', { maxConcurrency: 3 }),
      list({ after: 'map' }, { parents: ['1'] }),
    ]);
    const [, mapTaskId, dependant] = taskIds;
    const itemIds = itemIdsOf(mapTaskId, ITEMS);
    for (const itemId of itemIds.slice(0, 2))
      await waitForTask(itemId, { until: (item) => item.phase === 'awaiting_agent_report' });
    expect(await waitForTask(itemIds[3], { until: () => true })).toMatchObject({ status: 'pending', phase: 'queued' });
    release('first-failure');

    const map = await waitForTask(mapTaskId);
    expect(map).toMatchObject({
      status: 'failed',
      error: {
        code: 'ITEM_FAILED',
        message: expect.any(String),
        details: {
          index: 2,
          taskId: itemIds[2],
          status: 'failed',
          error: { code: 'EXECUTION_ERROR', message: 'element 2 failed' },
        },
      },
    });
    for (const itemId of itemIds.slice(0, 2)) {
      expect(await waitForTask(itemId)).toMatchObject({ status: 'cancelled' });
      await until(
        () => callsFor(itemId).some((received) => received.body.cancel === true),
        `the cancellation notice of ${itemId}`,
      );
    }
    // No more start once the map failed: the items still queued in the first chunk end cancelled,
    // and those of the next chunk were never created.
    expect(callsFor(itemIds[3])).toEqual([]);
    expect(await waitForTask(itemIds[3])).toMatchObject({ status: 'cancelled' });
    expect((await call('GET', `/tasks/${itemIds[ITEMS - 1]}`, { apiKey: 'admin' })).status).toBe(404);
    expect(await storedStatuses(db(), itemIds.slice(256))).toEqual({});
    expect(await waitForTask(dependant)).toMatchObject({ status: 'failed', error: { code: 'DEPENDENCY_FAILED' } });
    expect((await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' })).body.status).toBe('failed');
  });
});
