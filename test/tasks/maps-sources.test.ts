import { useTestDatabase } from '../support/database';
import { call } from '../support/http';
import { itemIdsOf, useMapAgent } from '../support/maps';
import { composeTasks, waitForTask } from '../support/tasks';

/** The array a map runs over, as the parent's result has it or not. */
describe("a map's source", () => {
  const mapAgent = useMapAgent();
  const db = useTestDatabase();

  /** Runs a map over `field` of a parent that completes with `result`, and returns the map's end and item ids. */
  async function mapOver(result: Record<string, unknown>, field: string) {
    const { list, work } = mapAgent();
    const { taskIds } = await composeTasks([list(result), work('0', field)]);
    const [, mapTaskId] = taskIds;
    return { map: await waitForTask(mapTaskId), itemIds: itemIdsOf(mapTaskId, 2) };
  }

  it('fails the map with TYPE_MISMATCH when the field is not an array, and with MISSING_FIELD when there is none', async () => {
    const notArray = await mapOver({ hits: { n: 0 } }, 'hits');
    expect(notArray.map).toMatchObject({ status: 'failed', error: { code: 'TYPE_MISMATCH' } });
    const missing = await mapOver({ other: [] }, '/hits');
    expect(missing.map).toMatchObject({ status: 'failed', error: { code: 'MISSING_FIELD' } });
    for (const { itemIds } of [notArray, missing])
      expect(
        await db()
          .collection('tasks')
          .countDocuments({ _id: { $in: itemIds } as any }),
      ).toBe(0);
  });

  it('is skipped, creating no item, when its parent was skipped by its condition', async () => {
    const { list, work } = mapAgent();
    const { compositionId, taskIds } = await composeTasks([
      list({ hits: [{ n: 0 }], search: false }),
      list(
        { hits: [{ n: 1 }] },
        { parents: ['0'], when: { source: { taskId: '0', field: 'search' }, schema: { const: true } } },
      ),
      work('1', 'hits'),
    ]);
    const [, search, mapTaskId] = taskIds;
    expect(await waitForTask(search)).toMatchObject({ status: 'skipped', skipReason: { code: 'CONDITION_NOT_MET' } });
    expect(await waitForTask(mapTaskId)).toMatchObject({ status: 'skipped', skipReason: { code: 'PARENT_SKIPPED' } });
    expect((await call('GET', `/tasks/${itemIdsOf(mapTaskId, 1)[0]}`, { apiKey: 'admin' })).status).toBe(404);
    expect((await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' })).body.status).toBe('completed');
  });
});
