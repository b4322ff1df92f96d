import type { OpenChunkInput } from '../../workflows/map-contract';
import { substituteItem } from '../../workflows/item-arguments';
import { itemTaskId } from '../../workflows/task-types';
import type { Principal } from '../auth/principal';
import type { RecentAgents } from '../registry/recent-agents';
import { checkSubstitutedParams } from '../tasks/substituted-params';
import type { NewItem } from '../tasks/task-document';
import type { SchemaChecks } from '../user-schemas/schema-checks';

/**
 * The chunk's items `from` to `to` of `elements`, each with the map's params, its item arguments
 * filled in from its element and checked against the tool's inputSchema (with its defaults filled
 * in). An item whose params fail is to be created failed, with their error, and never called.
 */
export async function itemsOfChunk(
  { mapTaskId, from, to, agentId, operation, params, workflowId }: OpenChunkInput,
  elements: readonly unknown[],
  createdBy: Principal,
  checks: { agents: Pick<RecentAgents, 'findById'>; schemas: SchemaChecks },
): Promise<NewItem[]> {
  const indices = Array.from({ length: to - from + 1 }, (_, offset) => from + offset);
  return Promise.all(
    indices.map(async (index): Promise<NewItem> => {
      const item = {
        _id: itemTaskId(mapTaskId, index),
        agentId,
        operation,
        mapTaskId,
        itemIndex: index,
        workflowId,
        createdBy,
      };
      const substituted = substituteItem(params, elements[index], index);
      // A failed substitution leaves the map's params, item arguments in place, on the record.
      if ('error' in substituted) return { ...item, params, error: substituted.error };
      const checked = await checkSubstitutedParams(checks.agents, checks.schemas, {
        agentId,
        operation,
        params: substituted.params,
      });
      return 'error' in checked
        ? { ...item, params: substituted.params, error: checked.error }
        : { ...item, params: checked.params };
    }),
  );
}
