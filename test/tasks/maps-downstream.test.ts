import { useMapAgent } from '../support/maps';
import { composeTasks, waitForTask } from '../support/tasks';

/** Some result has this `n`: what a condition after the map asks of its results. */
const anyOne = (n: number) => ({
  type: 'array',
  contains: { type: 'object', properties: { n: { const: n } }, required: ['n'] },
});

/** Tasks after a map read its `results`: as a pending argument, and in conditions. */
describe('the dependants of a map', () => {
  const mapAgent = useMapAgent();

  it("reads the map's results through a pending argument, and runs or skips on conditions over them", async () => {
    const { list, work } = mapAgent();
    const { taskIds } = await composeTasks([
      list({ hits: [{ n: 0 }, { n: 1 }, { n: 2 }] }),
      work('0', 'hits'),
      list({ summaries: { source: { taskId: '1', field: 'results' }, type: 'array' } }, { parents: ['1'] }),
      list(
        { flagged: true },
        { parents: ['1'], when: { source: { taskId: '1', field: 'results' }, schema: anyOne(1) } },
      ),
      list(
        { flagged: false },
        { parents: ['1'], when: { source: { taskId: '1', field: '/results' }, schema: anyOne(7) } },
      ),
      list({ first: { source: { taskId: '1', field: '/results/0/n' } } }, { parents: ['1'] }),
    ]);
    const [, mapTaskId, reader, met, unmet, pointer] = taskIds;

    expect(await waitForTask(mapTaskId)).toMatchObject({ status: 'completed' });
    expect(await waitForTask(reader)).toMatchObject({
      status: 'completed',
      result: { summaries: [{ n: 0 }, { n: 1 }, { n: 2 }] },
    });
    expect(await waitForTask(met)).toMatchObject({ status: 'completed', result: { flagged: true } });
    expect(await waitForTask(unmet)).toMatchObject({ status: 'skipped', skipReason: { code: 'CONDITION_NOT_MET' } });
    expect(await waitForTask(pointer)).toMatchObject({ status: 'completed', result: { first: 0 } });
  });
});
