import Ajv, { type ErrorObject, type JSONSchemaType, type Schema, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { ApiError, ErrorCode } from './errors';

/**
 * Validation of the service's own request bodies and queries, done once at the edge: after
 * `validator(schema)` accepted a value, the code inside trusts its type.
 */
const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: true, coerceTypes: false });
addFormats(ajv);

const MAX_PROBLEMS = 100;

export interface ValidationProblem {
  path: string;
  message: string;
}

export function toProblems(errors: ErrorObject[] | null | undefined): ValidationProblem[] {
  return (errors ?? []).map((error) => ({
    path: error.instancePath || '/',
    message: error.keyword === 'additionalProperties'
      ? `unknown property "${(error.params as { additionalProperty: string }).additionalProperty}"`
      : error.message ?? 'is invalid',
  }));
}

/** A checker for `schema`: returns the value typed as T, or throws 400 VALIDATION_ERROR with every problem. */
export function validator<T>(schema: JSONSchemaType<T> | Schema, what: string): (value: unknown) => T {
  const validate = ajv.compile(schema) as ValidateFunction<T>;
  return (value: unknown): T => {
    if (validate(value)) return value;
    // Bounded: a huge array of wrong items would otherwise answer with megabytes of problems.
    const problems = toProblems(validate.errors?.slice(0, MAX_PROBLEMS));
    const summary = problems.slice(0, 3).map((problem) => `${problem.path} ${problem.message}`).join('; ');
    throw new ApiError(ErrorCode.VALIDATION_ERROR, `Invalid ${what}: ${summary}`, problems);
  };
}
