import { useTestDatabase } from '../support/database';
import { call } from '../support/http';
import { itemIdsOf, storedStatuses, useMapAgent } from '../support/maps';
import { composeTasks, waitForTask } from '../support/tasks';

/** The array a map runs over, as the parent's result has it or not. */
describe("a map's source", () => {
  const mapAgent = useMapAgent();
  const db = useTestDatabase();

  // A field that is not an array: test/tasks/maps.test.ts.
  it('fails the map with MISSING_FIELD when the parent has no such field, creating no item', async () => {
    const { list, work } = mapAgent();
    const { taskIds } = await composeTasks([list({ other: [] }), work('0', '/hits')]);
    const [, mapTaskId] = taskIds;
    expect(await waitForTask(mapTaskId)).toMatchObject({ status: 'failed', error: { code: 'MISSING_FIELD' } });
    expect(await storedStatuses(db(), itemIdsOf(mapTaskId, 2))).toEqual({});
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
