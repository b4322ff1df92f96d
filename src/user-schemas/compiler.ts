import Ajv, { type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../http/json-depth';
import { canonicalJson } from '../util/canonical-json';
import type { JsonSchema } from './json-schema';
import { costProblem } from './cost';

/**
 * Limits on schemas agents supply, so that one registration cannot make compilation slow or huge,
 * nor a check of params against it hold the event loop (docs/benchmarks.md, "Agent schemas: bounded checks").
 */
export const USER_SCHEMA_LIMITS = { maxBytes: 64 * 1024, maxDepth: 32, maxSchemasPerValue: 32 } as const;

const PLACEHOLDER_ID = 'https://agent-schema.invalid/root.json';

/**
 * `pattern` and `patternProperties` of agents' schemas run on RE2 (linear time). With JavaScript's
 * backtracking RegExp, a pattern such as `^(a+)+$` and 40 characters of params would hold the
 * process's event loop for hours. Lookarounds and backreferences are refused at registration.
 */
const linearTimeRegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    // Ajv shares one compiled pattern between schemas by this key.
    return { test: (text: string) => compiled.test(text), toString: () => pattern };
  },
  { code: 'linearTimeRegExp' },
);

/**
 * `uniqueItems` in time linear in the items: each item's canonical JSON (keys sorted) goes into a
 * map. Ajv's own check compares items that may be objects or arrays pair by pair: 40 000 small
 * objects held the event loop for 51 s, and 1 000 items filling 1 MiB for 2 s. JSON Schema's
 * equality is the canonical JSON's: key order does not count, array order does, 1 equals 1.0.
 */
const uniqueItems: SchemaValidateFunction = (unique: boolean, items: unknown[]): boolean => {
  uniqueItems.errors = undefined;
  if (!unique) return true;
  const seen = new Map<string, number>();
  for (const [index, item] of items.entries()) {
    const key = canonicalJson(item);
    const first = seen.get(key);
    if (first !== undefined) {
      uniqueItems.errors = [
        {
          keyword: 'uniqueItems',
          message: `must NOT have duplicate items (items ## ${first} and ${index} are identical)`,
          params: { i: first, j: index },
        },
      ];
      return false;
    }
    seen.set(key, index);
  }
  return true;
};

export class SchemaRejected extends Error {
  /** `pointer` is the JSON pointer of the part of the schema at fault, when one part is. */
  constructor(
    message: string,
    readonly pointer?: string,
  ) {
    super(message);
    this.name = 'SchemaRejected';
  }
}

/**
 * Compiles JSON Schemas supplied by agents (tool inputSchema and outputSchema). Strict about
 * keywords (an unknown or misplaced keyword is an error, not silently ignored), no remote `$ref`
 * (nothing is loaded), and no `allErrors`, so validation of a hostile input stops at the first error.
 */
export class UserSchemaCompiler {
  private readonly cache = new Map<string, ValidateFunction>();
  private readonly ajv: Ajv;

  constructor(private readonly maxCached = 10_000) {
    this.ajv = new Ajv({
      strictSchema: true,
      strictNumbers: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
      allErrors: false,
      useDefaults: true,
      // Agents' schemas must not register themselves globally by $id and collide with each other.
      addUsedSchema: false,
      validateSchema: true,
      logger: false,
      code: { regExp: linearTimeRegExp },
    });
    addFormats(this.ajv);
    // Titles of `enum` values in MCP elicitation schemas (its legacy form): an annotation, checked for nothing.
    this.ajv.addKeyword({ keyword: 'enumNames', schemaType: 'array' });
    this.ajv.removeKeyword('uniqueItems');
    this.ajv.addKeyword({
      keyword: 'uniqueItems',
      type: 'array',
      schemaType: 'boolean',
      errors: true,
      validate: uniqueItems,
    });
  }

  /** Compiles `schema` or throws SchemaRejected saying why. */
  compile(schema: JsonSchema): ValidateFunction {
    checkShape(schema);
    // Without addUsedSchema, Ajv resolves a `$ref: "#"` (a recursive schema) only against a root
    // that has an $id; a placeholder one costs nothing and registers nothing.
    const identified = '$id' in schema ? schema : { $id: PLACEHOLDER_ID, ...schema };
    let validate: ValidateFunction;
    try {
      validate = this.ajv.compile(identified);
    } catch (error) {
      throw new SchemaRejected((error as Error).message);
    }
    // An `$async` schema compiles to a validator that returns a promise, which every caller would
    // take for "valid" while its rejection went unhandled.
    if ((validate as { $async?: boolean }).$async) throw new SchemaRejected('a schema must not be $async');
    const costly = costProblem(identified, { ...USER_SCHEMA_LIMITS, maxParamsDepth: MAX_JSON_DEPTH });
    if (costly) throw new SchemaRejected(costly.message, costly.pointer);
    return validate;
  }

  /** The compiled validator for `key` (for instance `${agentId}@${version}:${operation}`), compiled once. */
  cached(key: string, schema: JsonSchema): ValidateFunction {
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.compile(schema);
      if (this.cache.size >= this.maxCached) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(key, validate);
    }
    return validate;
  }
}

function checkShape(schema: unknown): void {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new SchemaRejected('a schema must be a JSON object');
  }
  // Depth first: a hostile schema nested thousands deep would overflow the stack of JSON.stringify.
  if (nestsDeeperThan(schema, USER_SCHEMA_LIMITS.maxDepth)) {
    throw new SchemaRejected(`a schema must nest at most ${USER_SCHEMA_LIMITS.maxDepth} levels deep`);
  }
  if (JSON.stringify(schema).length > USER_SCHEMA_LIMITS.maxBytes) {
    throw new SchemaRejected(`a schema must be at most ${USER_SCHEMA_LIMITS.maxBytes} bytes of JSON`);
  }
}
