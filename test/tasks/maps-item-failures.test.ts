import { useTestDatabase } from '../support/database';
import { call } from '../support/http';
import { elements, itemIdsOf, storedStatuses, useMapAgent, waitForItem, type Element } from '../support/maps';
import { composeTasks, waitForTask } from '../support/tasks';
import { until } from '../support/until';
import { MAX_ITEMS_PER_CHUNK } from '../../src/config/history-budget';
import { planMap } from '../../workflows/map-plan';

/** Enough items for more chunks than a map of maxConcurrency 2 runs at once. */
const ITEMS = 40;

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
    // Two lanes, one item at a time each: the first runs chunk 0, the second chunk 1.
    const { chunks, shares } = planMap(ITEMS, 2, MAX_ITEMS_PER_CHUNK);
    expect({ lanes: shares.length, chunks: chunks.length > 2 }).toEqual({ lanes: 2, chunks: true });
    const [awaiting, queued, failing, unreached] = [0, 1, chunks[1].from, chunks[2].from];
    // The first item takes its task (202); the second chunk's first item fails once the first awaits its report.
    const hits: Element[] = elements(ITEMS).map((element) => {
      if (element.n === awaiting) return { ...element, reply: 'accept' };
      if (element.n === failing) return { ...element, reply: 'fail', heldBy: 'first-failure' };
      return element;
    });
    const { compositionId, taskIds } = await composeTasks([
      list({ hits }),
      work('0', 'hits', { maxConcurrency: 2 }),
      list({ after: 'map' }, { parents: ['1'] }),
    ]);
    const [, mapTaskId, dependant] = taskIds;
    const itemIds = itemIdsOf(mapTaskId, ITEMS);
    await waitForItem(itemIds[awaiting], { until: (item) => item.phase === 'awaiting_agent_report' });
    await until(() => callsFor(itemIds[failing]).length > 0, 'the call of the failing item');
    expect(await waitForTask(itemIds[queued], { until: () => true })).toMatchObject({
      status: 'pending',
      phase: 'queued',
    });
    release('first-failure');

    expect(await waitForTask(mapTaskId)).toMatchObject({
      status: 'failed',
      error: {
        code: 'ITEM_FAILED',
        message: expect.any(String),
        details: {
          index: failing,
          taskId: itemIds[failing],
          status: 'failed',
          error: { code: 'EXECUTION_ERROR', message: `element ${failing} failed` },
        },
      },
    });
    expect(await waitForTask(itemIds[awaiting])).toMatchObject({ status: 'cancelled' });
    await until(
      () => callsFor(itemIds[awaiting]).some((received) => received.body.cancel === true),
      'the cancellation notice of the item awaiting its report',
    );
    // No more start once the map failed: the items still queued in a running chunk end cancelled,
    // and those of the chunks no lane took were never created.
    expect(await waitForTask(itemIds[queued])).toMatchObject({ status: 'cancelled' });
    expect(callsFor(itemIds[queued])).toEqual([]);
    expect((await call('GET', `/tasks/${itemIds[unreached]}`, { apiKey: 'admin' })).status).toBe(404);
    expect(await storedStatuses(db(), itemIds.slice(unreached))).toEqual({});
    expect(itemIds.slice(unreached).filter((itemId) => callsFor(itemId).length > 0)).toEqual([]);
    expect(await waitForTask(dependant)).toMatchObject({ status: 'failed', error: { code: 'DEPENDENCY_FAILED' } });
    expect((await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' })).body.status).toBe('failed');
  });
});
