import Ajv, { type Options, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import type AjvCore from 'ajv/dist/core';
import type { RegExpEngine } from 'ajv/dist/types';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../http/json-depth';
import { canonicalJson } from '../util/canonical-json';
import type { JsonSchema } from './json-schema';
import { costProblem } from './cost';
import { declaredDialect, type Dialect } from './dialects';

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
 * Ajv's settings for agents' schemas, the same in every dialect. Strict about keywords (an unknown
 * or misplaced keyword is an error, not silently ignored), no remote `$ref` (nothing is loaded), and
 * no `allErrors`, so validation of a hostile input stops at the first error.
 */
const AJV_OPTIONS: Options = {
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
};

/** `ajv` with the formats and keywords of agents' schemas. */
function withOurKeywords<T extends AjvCore>(ajv: T): T {
  addFormats(ajv);
  // Titles of `enum` values in MCP elicitation schemas (its legacy form): an annotation, checked for nothing.
  ajv.addKeyword({ keyword: 'enumNames', schemaType: 'array' });
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({
    keyword: 'uniqueItems',
    type: 'array',
    schemaType: 'boolean',
    errors: true,
    validate: uniqueItems,
  });
  return ajv;
}

/**
 * Compiles JSON Schemas supplied by agents (tool inputSchema and outputSchema) in the dialect each
 * declares by `$schema`: JSON Schema 2020-12, MCP's, or draft-07. A schema without `$schema` is
 * 2020-12, as MCP says, unless only draft-07 reads it (an array `items`, `additionalItems`, an
 * `$id: "#name"`): such schemas were registered when draft-07 was the default, and keep their meaning.
 */
export class UserSchemaCompiler {
  private readonly cache = new Map<string, ValidateFunction>();
  private readonly ajv: Record<Dialect, AjvCore> = {
    // Ajv resolves `$ref: "#name"` to an `$anchor` of 2020-12, but knows no such keyword: strict, it would refuse it.
    '2020-12': withOurKeywords(new Ajv2020(AJV_OPTIONS)).addKeyword({ keyword: '$anchor', schemaType: 'string' }),
    'draft-07': withOurKeywords(new Ajv(AJV_OPTIONS)),
  };

  constructor(private readonly maxCached = 10_000) {
    // Ajv compiles a dialect's meta-schema when it first checks a schema against it, in about 100 ms:
    // here, as a check thread starts, rather than within the deadline of the first check.
    for (const ajv of Object.values(this.ajv)) ajv.getSchema(ajv.defaultMeta() as string);
  }

  /** Compiles `schema` or throws SchemaRejected saying why. */
  compile(schema: JsonSchema): ValidateFunction {
    checkShape(schema);
    // Without addUsedSchema, Ajv resolves a `$ref: "#"` (a recursive schema) only against a root
    // that has an $id; a placeholder one costs nothing and registers nothing.
    const identified = '$id' in schema ? schema : { $id: PLACEHOLDER_ID, ...schema };
    const validate = this.inItsDialect(identified);
    // An `$async` schema compiles to a validator that returns a promise, which every caller would
    // take for "valid" while its rejection went unhandled.
    if ((validate as { $async?: boolean }).$async) throw new SchemaRejected('a schema must not be $async');
    const costly = costProblem(identified, { ...USER_SCHEMA_LIMITS, maxParamsDepth: MAX_JSON_DEPTH });
    if (costly) throw new SchemaRejected(costly.message, costly.pointer);
    return validate;
  }

  private inItsDialect(schema: JsonSchema): ValidateFunction {
    const declared = declaredDialect(schema);
    if ('refused' in declared) throw new SchemaRejected(declared.refused, '/$schema');
    if (declared.dialect) return compiledBy(this.ajv[declared.dialect], schema);
    try {
      return compiledBy(this.ajv['2020-12'], schema);
    } catch (refused) {
      try {
        return compiledBy(this.ajv['draft-07'], schema);
      } catch {
        // The default dialect's reason is the one to give.
        throw refused;
      }
    }
  }

  /**
   * The compiled validator for `key` (for instance `${agentId}@${version}:${operation}`), compiled
   * once: `schema` is asked for only then.
   */
  cached(key: string, schema: () => JsonSchema): ValidateFunction {
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.compile(schema());
      if (this.cache.size >= this.maxCached) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(key, validate);
    }
    return validate;
  }
}

function compiledBy(ajv: AjvCore, schema: JsonSchema): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (error) {
    throw new SchemaRejected((error as Error).message);
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
