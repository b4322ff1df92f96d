import { ApplicationFailure } from '@temporalio/activity';
import { itemsOfChunk } from '../src/maps/map-items';
import type { MapSources } from '../src/maps/map-source';
import type { RecentAgents } from '../src/registry/recent-agents';
import type { TaskStore } from '../src/tasks/task-store';
import type { SchemaChecks } from '../src/user-schemas/schema-checks';
import type { OpenChunkInput, OpenedChunk } from '../workflows/map-contract';
import { TaskErrorCode } from '../workflows/task-types';

/**
 * Creates a chunk's items in one write, each with its params filled in from its element and
 * checked; returns those created failed. The array is the one openMap checked, kept parsed by the
 * worker (MapSources).
 */
export function openChunkActivity(
  taskStore: TaskStore,
  sources: MapSources,
  agents: RecentAgents,
  schemas: SchemaChecks,
) {
  return async function openChunk(input: OpenChunkInput): Promise<OpenedChunk> {
    const [elements, map] = await Promise.all([
      sources.read(input.sourceTaskId, input.field),
      taskStore.find(input.mapTaskId),
    ]);
    if (!map)
      throw ApplicationFailure.nonRetryable(
        `Map task ${input.mapTaskId} is not in the task store`,
        TaskErrorCode.WORKFLOW_ENDED,
      );
    // Items are their map's creator's: the same readers, the same right to cancel.
    const items = await itemsOfChunk(input, elements, map.createdBy, { agents, schemas });
    await taskStore.createItems(items);
    return { invalid: items.filter((item) => item.error !== undefined).map((item) => item.itemIndex!) };
  };
}
