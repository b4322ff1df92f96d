import { elements, useMapAgent } from '../support/maps';
import { composeTasks, waitForTask } from '../support/tasks';
import { useTemporalClient } from '../support/temporal';
import { MAX_ITEMS_PER_CHUNK } from '../../src/config/history-budget';
import { planMap } from '../../workflows/map-plan';
import { workflowIdOfComposition, workflowIdOfMap, workflowIdOfMapChunk } from '../../workflows/task-types';

/** Several chunks at maxConcurrency 2, the last one shorter. */
const ITEMS = 20;
const MAX_CONCURRENCY = 2;

/** A map's workflows as the Temporal Web UI's Relationships tab shows them, read through the same API. */
describe("a map's workflows in the Web UI", () => {
  const mapAgent = useMapAgent();
  const client = useTemporalClient();

  it('starts the map workflow as a child of its composition, and each chunk as a child of the map, each with a summary', async () => {
    const { agent, list, work } = mapAgent();
    const { compositionId, taskIds } = await composeTasks([
      list({ hits: elements(ITEMS) }),
      work('0', 'hits', { maxConcurrency: MAX_CONCURRENCY }),
    ]);
    const [, mapTaskId] = taskIds;
    expect(await waitForTask(mapTaskId)).toMatchObject({ status: 'completed' });

    const describeRun = (workflowId: string) => client().workflow.getHandle(workflowId).describe();
    const composition = workflowIdOfComposition(compositionId);
    const relationsOf = async (workflowId: string) => {
      const description = await describeRun(workflowId);
      return {
        type: description.type,
        parent: description.parentExecution?.workflowId,
        root: description.rootExecution?.workflowId,
        summary: await description.staticSummary(),
      };
    };
    expect(await relationsOf(workflowIdOfMap(mapTaskId))).toEqual({
      type: 'mapWorkflow',
      parent: composition,
      root: composition,
      summary: expect.stringContaining('tools/work'),
    });
    const { chunks } = planMap(ITEMS, MAX_CONCURRENCY, MAX_ITEMS_PER_CHUNK);
    expect(chunks.length).toBeGreaterThan(1);
    for (const { from, to } of chunks) {
      expect(await relationsOf(workflowIdOfMapChunk(mapTaskId, from, to))).toEqual({
        type: 'mapChunkWorkflow',
        parent: workflowIdOfMap(mapTaskId),
        root: composition,
        summary: expect.stringMatching(new RegExp(`${from}.*${to}`)),
      });
    }
    expect((await relationsOf(composition)).summary).toEqual(expect.stringContaining(agent.name));
  });
});
