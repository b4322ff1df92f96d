import type { ErrorObject } from 'ajv';
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
