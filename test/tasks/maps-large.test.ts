import { useTestDatabase } from '../support/database';
import { call } from '../support/http';
import { elements, itemIdsOf, storedStatuses, LONG_MAP_TEST_MS, useMapAgent, waitForMap } from '../support/maps';
import { composeTasks } from '../support/tasks';

const ITEMS = 2_000;
/** The most the API allows: the items are trivial, so the map's own bookkeeping is what is tested. */
const MAX_CONCURRENCY = 100;
/** Items whose GET and events are read: the first, the last, and some between. */
const SAMPLE = [0, 1, 7, 8, 255, 256, 1_000, ITEMS - 1];

/** A map of 2 000 items: past one workflow's history budget, over several chunks' workflows. */
describe('a map of 2 000 items', () => {
  const mapAgent = useMapAgent();
  const db = useTestDatabase();

  it(
    'completes with every result in element order, every item recorded completed, and its counts',
    async () => {
      const { list, work } = mapAgent();
      const { compositionId, taskIds } = await composeTasks([
        list({ hits: elements(ITEMS) }),
        work('0', 'hits', { maxConcurrency: MAX_CONCURRENCY }),
      ]);
      const [, mapTaskId] = taskIds;
      const map = await waitForMap(mapTaskId);

      expect(map).toMatchObject({
        status: 'completed',
        map: { total: ITEMS, completed: ITEMS, failed: 0, cancelled: 0 },
      });
      expect(map.result.results).toEqual(elements(ITEMS).map(({ n }) => ({ n })));
      expect(map.result.errors).toBeUndefined();
      const itemIds = itemIdsOf(mapTaskId, ITEMS);
      expect(await storedStatuses(db(), itemIds)).toEqual({ completed: ITEMS });

      for (const index of SAMPLE) {
        const itemId = itemIds[index];
        const item = await call('GET', `/tasks/${itemId}`, { apiKey: 'admin' });
        expect(item.status).toBe(200);
        expect(item.body).toMatchObject({
          taskId: itemId,
          status: 'completed',
          result: { n: index },
          mapTaskId,
          itemIndex: index,
          operation: 'tools/work',
        });
        expect(item.body.compositionId).toBeUndefined();
        const events = await call('GET', `/tasks/${itemId}/events?format=json`, { apiKey: 'admin' });
        expect(events.status).toBe(200);
        expect(events.body[0]).toMatchObject({ taskId: itemId, type: 'created' });
        expect(events.body.at(-1)).toMatchObject({ taskId: itemId, type: 'completed' });
        expect(mapAgent().callsFor(itemId)).toHaveLength(1);
      }
      expect((await call('GET', `/tasks/${itemIdsOf(mapTaskId, ITEMS + 1)[ITEMS]}`, { apiKey: 'admin' })).status).toBe(
        404,
      );
      const composition = await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' });
      expect(composition.body).toMatchObject({ status: 'completed' });
      // The composition lists its own tasks, not the map's items.
      expect(composition.body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual(taskIds);
    },
    LONG_MAP_TEST_MS,
  );
});
