import { ApplicationFailure } from '@temporalio/activity';
import type { RecentAgents } from '../src/registry/recent-agents';
import type { UserSchemaCompiler } from '../src/registry/user-schemas';
import { findOperation, paramsProblems } from '../src/tasks/operations';
import { summariseProblems } from '../src/http/validate';
import { TaskErrorCode } from '../workflows/task-types';
import type { ValidateParamsInput } from '../workflows/activity-contract';

/**
 * Checks params after pending arguments were substituted, against the tool's inputSchema (Ajv is
 * not workflow-safe, hence an activity). Returns them with the schema's defaults filled in.
 */
export function validateParamsActivity(agents: RecentAgents, schemas: UserSchemaCompiler) {
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
    const problems = paramsProblems(schemas, agent, operation, lookup.entry, params);
    if (problems.length > 0) {
      throw ApplicationFailure.nonRetryable(
        `Params after substitution fail the inputSchema of ${operation}: ${summariseProblems(problems)}`,
        TaskErrorCode.VALIDATION_ERROR,
        problems,
      );
    }
    return params;
  };
}
