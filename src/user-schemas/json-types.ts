/**
 * Sets of JSON types, as JSON Schema's `type` names them. `number` is held as two parts, whole and
 * fractional numbers, so that `integer` fits `number` and not the reverse.
 */
const TYPE_PARTS = ['null', 'boolean', 'object', 'array', 'string', 'integer', 'fraction'] as const;
type TypePart = (typeof TYPE_PARTS)[number];

export type JsonTypes = ReadonlySet<TypePart>;

export const ANY_TYPE: JsonTypes = new Set(TYPE_PARTS);
export const NO_TYPE: JsonTypes = new Set();

/** The parts each of JSON Schema's type names stands for. */
const PARTS_OF: Record<string, TypePart[]> = {
  null: ['null'],
  boolean: ['boolean'],
  object: ['object'],
  array: ['array'],
  string: ['string'],
  integer: ['integer'],
  number: ['integer', 'fraction'],
};

/** The types one name of `type` stands for; every type for a name JSON Schema does not know. */
const typesNamed = (name: unknown): TypePart[] =>
  typeof name === 'string' && Object.hasOwn(PARTS_OF, name) ? PARTS_OF[name] : [...TYPE_PARTS];

/** The types a `type` keyword allows: one name or a list of names. */
export function typesOfKeyword(type: unknown): JsonTypes {
  return new Set((Array.isArray(type) ? type : [type]).flatMap(typesNamed));
}

/** The type of one JSON value (of `const` or `enum`). */
export function typeOfValue(value: unknown): TypePart {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'fraction';
  return typeof value as TypePart;
}

export const intersection = (a: JsonTypes, b: JsonTypes): JsonTypes => new Set([...a].filter((part) => b.has(part)));
export const union = (a: JsonTypes, b: JsonTypes): JsonTypes => new Set([...a, ...b]);

/** Whether every value of the types `inner` is of the types `outer`. */
export const fitsIn = (inner: JsonTypes, outer: JsonTypes): boolean => [...inner].every((part) => outer.has(part));

/** Whether the types say nothing: a value may be of any. */
export const tellsNothing = (types: JsonTypes): boolean => types.size === TYPE_PARTS.length;

/** The types by JSON Schema's names, in its order: whole and fractional numbers together are `number`. */
export function typeNames(types: JsonTypes): string[] {
  const names: string[] = TYPE_PARTS.filter((part) => part !== 'integer' && part !== 'fraction' && types.has(part));
  if (types.has('fraction')) names.push('number');
  else if (types.has('integer')) names.push('integer');
  return names;
}
