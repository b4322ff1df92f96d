import Ajv, { type ErrorObject, type JSONSchemaType, type Schema, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { ApiError, ErrorCode } from './errors';

/**
 * Validation of the service's own request bodies and queries, done once at the edge: after
 * `validator(schema)` accepted a value, the code inside trusts its type.
 */
// verbose: errors carry their schema, so a pattern's `description` can replace the regular expression in messages.
const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: true, coerceTypes: false, verbose: true });
addFormats(ajv);

const MAX_PROBLEMS = 100;

export interface ValidationProblem {
  path: string;
  message: string;
}

export function toProblems(errors: ErrorObject[] | null | undefined): ValidationProblem[] {
  return (errors ?? []).map((error) => ({ path: error.instancePath || '/', message: messageOf(error) }));
}

function messageOf(error: ErrorObject): string {
  if (error.keyword === 'additionalProperties')
    return `unknown property "${(error.params as { additionalProperty: string }).additionalProperty}"`;
  if (error.keyword === 'unevaluatedProperties')
    return `unknown property "${(error.params as { unevaluatedProperty: string }).unevaluatedProperty}"`;
  // "must match pattern ^(?:0|[1-9]…)$" or "must be equal to constant" says little to a caller; the
  // service's own patterns and constants describe themselves.
  const description = (error.parentSchema as { description?: unknown } | undefined)?.description;
  if ((error.keyword === 'pattern' || error.keyword === 'const') && typeof description === 'string') return description;
  return error.message ?? 'is invalid';
}

/** Problems as one line of an error message, `path message; …`: all of them, or the first `limit`. */
export function summariseProblems(problems: ValidationProblem[], limit = problems.length): string {
  return problems
    .slice(0, limit)
    .map((problem) => `${problem.path} ${problem.message}`)
    .join('; ');
}

/** A checker for `schema`: returns the value typed as T, or throws 400 VALIDATION_ERROR with every problem. */
export function validator<T>(schema: JSONSchemaType<T> | Schema, what: string): (value: unknown) => T {
  const validate = ajv.compile(schema) as ValidateFunction<T>;
  return (value: unknown): T => {
    if (validate(value)) return value;
    // Bounded: a huge array of wrong items would otherwise answer with megabytes of problems.
    const problems = toProblems(validate.errors?.slice(0, MAX_PROBLEMS));
    throw new ApiError(ErrorCode.VALIDATION_ERROR, `Invalid ${what}: ${summariseProblems(problems, 3)}`, problems);
  };
}
