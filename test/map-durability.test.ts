import { useCrashableService } from './support/crashable-service';
import { useTestDatabase } from './support/database';
import { elements, itemIdsOf, LONG_MAP_TEST_MS, useMapAgent, waitForMap } from './support/maps';
import { composeTasks } from './support/tasks';
import { until } from './support/until';

const ITEMS = 300;
const MAX_CONCURRENCY = 10;
/** Each item's call takes this long, so that the kill finds calls in flight and items queued. */
const WORK_MS = 50;

/** A map whose worker dies in the middle: it completes, and no item that had completed runs again. */
describe('a map across a worker SIGKILL', () => {
  const service = useCrashableService('map-durability');
  const mapAgent = useMapAgent({ workMs: WORK_MS });
  const db = useTestDatabase();

  it(
    'completes after the restart, and calls no item again that was recorded completed before the kill',
    async () => {
      const { list, work, callsFor } = mapAgent();
      const { taskIds } = await composeTasks(
        [list({ hits: elements(ITEMS) }), work('0', 'hits', { maxConcurrency: MAX_CONCURRENCY })],
        { baseUrl: service.baseUrl },
      );
      const [, mapTaskId] = taskIds;
      const itemIds = itemIdsOf(mapTaskId, ITEMS);
      const called = () => itemIds.filter((itemId) => callsFor(itemId).length > 0).length;
      await until(() => called() >= ITEMS / 2, 'half of the items called');
      await service.worker().stop('SIGKILL');
      // Nothing records an item while no worker runs: these are all that completed before the kill.
      const completedBeforeKill = (
        await db()
          .collection<{ _id: string }>('tasks')
          .find({ _id: { $in: itemIds }, status: 'completed' }, { projection: { _id: 1 } })
          .toArray()
      ).map(({ _id }) => _id);
      expect(completedBeforeKill.length).toBeGreaterThan(0);
      expect(completedBeforeKill.length).toBeLessThan(ITEMS);
      await service.startWorker();

      const map = await waitForMap(mapTaskId, { baseUrl: service.baseUrl });
      expect(map).toMatchObject({
        status: 'completed',
        map: { total: ITEMS, completed: ITEMS, failed: 0, cancelled: 0 },
      });
      expect(map.result.results).toEqual(elements(ITEMS).map(({ n }) => ({ n })));
      expect(completedBeforeKill.filter((itemId) => callsFor(itemId).length !== 1)).toEqual([]);
      expect(itemIds.filter((itemId) => callsFor(itemId).length === 0)).toEqual([]);
    },
    LONG_MAP_TEST_MS,
  );
});
