import { ApplicationFailure } from '@temporalio/activity';
import type { RecentAgents } from '../src/registry/recent-agents';
import type { SchemaChecks } from '../src/user-schemas/schema-checks';
import { checkParams, findOperation } from '../src/tasks/operations';
import { summariseProblems } from '../src/http/validate';
import { TaskErrorCode } from '../workflows/task-types';
import type { ValidateParamsInput } from '../workflows/activity-contract';

/**
 * Checks params after pending arguments were substituted, against the tool's inputSchema (Ajv is
 * not workflow-safe, hence an activity). Returns them with the schema's defaults filled in.
 */
export function validateParamsActivity(agents: RecentAgents, schemas: SchemaChecks) {
  return async function validateParams({
    agentId,
    operation,
    params,
  }: ValidateParamsInput): Promise<Record<string, unknown>> {
    const agent = await agents.findById(agentId);
    if (!agent)
      throw ApplicationFailure.nonRetryable(`Agent ${agentId} no longer exists`, TaskErrorCode.AGENT_NOT_FOUND);
    const lookup = findOperation(agent, operation);
    if (!lookup.found) throw ApplicationFailure.nonRetryable(lookup.message, TaskErrorCode.VALIDATION_ERROR);
    const checked = await checkParams(schemas, agent, operation, lookup.entry, params);
    if (!checked.valid) {
      throw ApplicationFailure.nonRetryable(
        `Params after substitution fail the inputSchema of ${operation}: ${summariseProblems(checked.problems)}`,
        TaskErrorCode.VALIDATION_ERROR,
        checked.problems,
      );
    }
    return checked.params;
  };
}
