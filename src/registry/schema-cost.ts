/**
 * What checking params against an agent's schema may cost. Ajv's time is linear in the params for
 * almost every keyword; the exceptions are refused at registration, each with the JSON pointer of
 * the keyword at fault. Figures: docs/benchmarks.md, "Agent schemas: bounded checks".
 */

type SchemaObject = Record<string, unknown>;

/** A refusal: why, and where in the schema (a JSON pointer, "" for the root). */
export interface CostProblem {
  pointer: string;
  message: string;
}

/**
 * The draft-07 keywords whose values are schemas, by shape. Every other keyword holds data
 * (`const`, `enum`, `default`, `examples`) or a plain value, so its objects are not schemas even
 * when they look like one.
 */
const SCHEMA_VALUED = {
  one: ['items', 'additionalItems', 'contains', 'additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else'],
  list: ['items', 'allOf', 'anyOf', 'oneOf'],
  // Arrays in `dependencies` are lists of property names, not schemas.
  byName: ['properties', 'patternProperties', 'definitions', '$defs', 'dependencies'],
} as const;

/** Types for which Ajv checks uniqueItems with a hash of the items, in linear time. */
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/** The first costly construct in `schema` (a schema Ajv compiled), or undefined. */
export function costProblem(schema: SchemaObject, limits: { maxItemsComparedPairwise: number }): CostProblem | undefined {
  for (const [node, pointer] of subschemas(schema, '')) {
    if (comparesPairwise(node) && !(typeof node.maxItems === 'number' && node.maxItems <= limits.maxItemsComparedPairwise)) {
      const at = `${pointer}/uniqueItems`;
      return {
        pointer: at,
        message:
          `uniqueItems at ${at} compares items that may be objects or arrays pair by pair, in time that grows with the square of their number: ` +
          `give that schema maxItems of at most ${limits.maxItemsComparedPairwise}, or items of scalar types`,
      };
    }
  }
  return undefined;
}

/**
 * Whether Ajv checks this schema's uniqueItems by comparing every pair of items: unless `items` is
 * one schema whose `type` names scalar types only, exactly as Ajv decides (it follows no `$ref`).
 */
function comparesPairwise(node: SchemaObject): boolean {
  if (node.uniqueItems !== true) return false;
  const items = node.items;
  if (!isSchemaObject(items)) return true;
  const types = typeof items.type === 'string' ? [items.type] : Array.isArray(items.type) ? items.type : [];
  return types.length === 0 || !types.every((type) => SCALAR_TYPES.has(type as string));
}

/** Every schema object in `schema` with its JSON pointer, `schema` first. */
function* subschemas(schema: SchemaObject, pointer: string): Generator<[SchemaObject, string]> {
  yield [schema, pointer];
  for (const keyword of SCHEMA_VALUED.one) {
    const value = schema[keyword];
    if (isSchemaObject(value)) yield* subschemas(value, `${pointer}/${keyword}`);
  }
  for (const keyword of SCHEMA_VALUED.list) {
    const value = schema[keyword];
    if (!Array.isArray(value)) continue;
    for (const [index, member] of value.entries()) if (isSchemaObject(member)) yield* subschemas(member, `${pointer}/${keyword}/${index}`);
  }
  for (const keyword of SCHEMA_VALUED.byName) {
    const value = schema[keyword];
    if (!isSchemaObject(value)) continue;
    for (const [name, member] of Object.entries(value)) if (isSchemaObject(member)) yield* subschemas(member, `${pointer}/${keyword}/${escapePointer(name)}`);
  }
}

function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 6901: `~` is written `~0` and `/` is written `~1`. */
function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}
