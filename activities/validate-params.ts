import { ApplicationFailure } from '@temporalio/activity';
import type { RecentAgents } from '../src/registry/recent-agents';
import type { SchemaChecks } from '../src/user-schemas/schema-checks';
import { checkSubstitutedParams } from '../src/tasks/substituted-params';
import type { ValidateParamsInput } from '../workflows/activity-contract';

/**
 * Checks params after pending arguments were substituted, against the tool's inputSchema (Ajv is
 * not workflow-safe, hence an activity). Returns them with the schema's defaults filled in.
 */
export function validateParamsActivity(agents: RecentAgents, schemas: SchemaChecks) {
  return async function validateParams(input: ValidateParamsInput): Promise<Record<string, unknown>> {
    const checked = await checkSubstitutedParams(agents, schemas, input);
    if ('params' in checked) return checked.params;
    const { code, message, details } = checked.error;
    throw ApplicationFailure.nonRetryable(message, code, ...(details === undefined ? [] : [details]));
  };
}
