import { ApplicationFailure } from '@temporalio/activity';
import { summariseProblems, toProblems } from '../src/http/validate';
import { SchemaRejected } from '../src/user-schemas/compiler';
import { CheckTooCostly, type SchemaChecks } from '../src/user-schemas/schema-checks';
import { TaskErrorCode } from '../workflows/task-types';
import type { CheckConditionInput, ConditionCheck } from '../workflows/activity-contract';

/**
 * Checks the value a task's condition reads against the condition's schema (Ajv is not
 * workflow-safe, hence an activity), compiled once per task. A check cut off for its cost, or a
 * schema this worker refuses, fails the task: whether it should run is then unknown.
 */
export function checkConditionActivity(schemas: SchemaChecks) {
  return async function checkCondition({ taskId, schema, value }: CheckConditionInput): Promise<ConditionCheck> {
    try {
      const outcome = await schemas.check(`when:${taskId}`, schema, value);
      if (outcome.valid) return { matches: true };
      const problems = toProblems(outcome.errors);
      return { matches: false, summary: summariseProblems(problems), problems };
    } catch (error) {
      if (error instanceof CheckTooCostly)
        throw ApplicationFailure.nonRetryable(
          `Checking the condition was cut off: ${error.message}`,
          TaskErrorCode.VALIDATION_ERROR,
        );
      if (error instanceof SchemaRejected)
        throw ApplicationFailure.nonRetryable(
          `The condition's schema cannot be used: ${error.message}`,
          TaskErrorCode.VALIDATION_ERROR,
        );
      throw error;
    }
  };
}
