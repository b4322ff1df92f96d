import { TaskErrorCode, type ServiceTaskError } from '../../workflows/task-types';
import { summariseProblems } from '../http/validate';
import type { RecentAgents } from '../registry/recent-agents';
import type { SchemaChecks } from '../user-schemas/schema-checks';
import { checkParams, findOperation } from './operations';

/**
 * Params filled in at run time (a dependant's pending arguments, a map item's element) checked
 * against the operation's inputSchema: with the schema's defaults filled in, or the task's error.
 */
export async function checkSubstitutedParams(
  agents: Pick<RecentAgents, 'findById'>,
  schemas: SchemaChecks,
  { agentId, operation, params }: { agentId: string; operation: string; params: Record<string, unknown> },
): Promise<{ params: Record<string, unknown> } | { error: ServiceTaskError }> {
  const agent = await agents.findById(agentId);
  if (!agent) return { error: { code: TaskErrorCode.AGENT_NOT_FOUND, message: `Agent ${agentId} no longer exists` } };
  const lookup = findOperation(agent, operation);
  if (!lookup.found) return { error: { code: TaskErrorCode.VALIDATION_ERROR, message: lookup.message } };
  const checked = await checkParams(schemas, agent, operation, lookup.entry, params);
  if (checked.valid) return { params: checked.params };
  return {
    error: {
      code: TaskErrorCode.VALIDATION_ERROR,
      message: `Params after substitution fail the inputSchema of ${operation}: ${summariseProblems(checked.problems)}`,
      details: checked.problems,
    },
  };
}
