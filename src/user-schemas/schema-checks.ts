import type { ErrorObject } from 'ajv';
import { toProblems, type ValidationProblem } from '../http/validate';
import type { JsonSchema } from './json-schema';

/** Data checked against a schema: valid, with the schema's defaults filled in, or the first error. */
export type CheckOutcome = { valid: true; data: unknown } | { valid: false; errors: ErrorObject[] };

/**
 * Every check of data against a schema an agent supplied, and every compilation of one. They run
 * off the event loop with a deadline (CheckPool): their cost grows with the schema times the data,
 * and one request must not hold the service while they run (docs/security.md, "No request stalls
 * the service").
 */
export interface SchemaChecks {
  /** Resolves when `schema` can be used; rejects with SchemaRejected saying why it cannot. */
  compile(schema: JsonSchema): Promise<void>;
  /**
   * `data` checked against `schema`, compiled once per `key` (for instance
   * `${agentId}@${version}:${operation}`). Rejects with CheckTooCostly when the check is cut off.
   */
  check(key: string, schema: JsonSchema, data: unknown): Promise<CheckOutcome>;
}

/** A check or compilation cut off: it ran past the deadline, or out of its thread's memory or stack. */
export class CheckTooCostly extends Error {
  constructor(readonly why: string) {
    super(`it ${why}`);
    this.name = 'CheckTooCostly';
  }
}

/** Data checked against a schema, as the caller is told: valid with its defaults, or the problems. */
export type DataCheck = { valid: true; data: unknown } | { valid: false; problems: ValidationProblem[] };

/**
 * `data` checked against `schema` (SchemaChecks.check) for an answer to the caller: Ajv's errors as
 * problems, and a check cut off for its cost as a problem of the data at `/`, saying what was
 * `checking` ("the params against the inputSchema of tools/x").
 */
export async function checkData(
  checks: SchemaChecks,
  key: string,
  schema: JsonSchema,
  data: unknown,
  checking: string,
): Promise<DataCheck> {
  try {
    const outcome = await checks.check(key, schema, data);
    return outcome.valid ? outcome : { valid: false, problems: toProblems(outcome.errors) };
  } catch (error) {
    if (!(error instanceof CheckTooCostly)) throw error;
    return { valid: false, problems: [{ path: '/', message: `checking ${checking} was cut off: ${error.message}` }] };
  }
}
