import { RE2JS } from 're2js';
import type { JsonSchema } from './json-schema';
import {
  ANY_TYPE,
  NO_TYPE,
  intersection,
  tellsNothing,
  typeNames,
  typeOfValue,
  typesOfKeyword,
  union,
  type JsonTypes,
} from './json-types';

/**
 * What an agent's schema says about the values below the one it describes, member by member: the
 * schema of a field of a tool's result, of a parameter of its params. Read without running the
 * schema, so it says only what surely holds: a member that surely is not there (`Absent`), and the
 * types its value may have. What it cannot tell (no schema, a keyword it does not follow, a `$ref` it
 * cannot resolve) it takes as "anything": a check built on it refuses only what surely fails.
 *
 * Followed: `type`, `const`, `enum`, `properties`, `patternProperties`, `additionalProperties`,
 * `prefixItems`, `items` and draft-07's list `items` with `additionalItems`, `allOf`, `anyOf`,
 * `oneOf`, and `$ref` within the same document. Not followed (taken as allowing anything): `not`,
 * `if`/`then`/`else`, `dependentSchemas`, `unevaluatedProperties`, `unevaluatedItems`.
 */

type SchemaObject = Record<string, unknown>;

/** A schema document: the root its `$ref`s resolve against. */
interface SchemaDocument {
  root: JsonSchema;
  /** False when a nested `$id` gives a part another base: `$ref`s are then not followed. */
  followsRefs: boolean;
  /** `$anchor`s, and draft-07's `$id: "#name"`, by name. */
  anchors: Map<string, Located>;
}

/** One schema in its document, at its JSON pointer there. */
interface Located {
  schema: unknown;
  pointer: string;
  document: SchemaDocument;
}

/**
 * What schemas say about one value: one schema of a document; every one of several (`allOf`); at
 * least one of several (`anyOf`, `oneOf`); an object with these members only, built by the caller
 * around values it knows the schemas of; or nothing.
 */
export type ValueShape =
  | { kind: 'schema'; at: Located }
  | { kind: 'all'; of: ValueShape[] }
  | { kind: 'any'; of: ValueShape[] }
  | { kind: 'members'; members: Record<string, ValueShape>; pointer: string; otherwise: string }
  | { kind: 'unknown' };

/** A member that surely is not there: the JSON pointer of the schema that excludes it, and why. */
export interface Absent {
  kind: 'absent';
  pointer: string;
  why: string;
}

export type MemberShape = ValueShape | Absent;

export const UNKNOWN_SHAPE: ValueShape = { kind: 'unknown' };

/**
 * Schemas one read visits at most, and how deep it follows them, before it takes the rest as telling
 * nothing. Registration bounds how many schemas apply to one value (cost.ts), but stored schemas
 * older than that rule may hold `$ref` loops, or chains that double at each step, and the read runs
 * on the API's event loop.
 */
const VISITS_PER_READ = 4_096;
const MAX_DEPTH = 64;

/** What is left of one read's visits, and how deep it is now. */
interface Visits {
  left: number;
  depth: number;
}

/** `read` one schema deeper, or `fallback` once the read's visits or depth are spent. */
function deeper<T>(visits: Visits, fallback: T, read: () => T): T {
  if (visits.left <= 0 || visits.depth >= MAX_DEPTH) return fallback;
  visits.left -= 1;
  visits.depth += 1;
  try {
    return read();
  } finally {
    visits.depth -= 1;
  }
}

const newVisits = (): Visits => ({ left: VISITS_PER_READ, depth: 0 });
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;
const OBJECT_TYPE = typesOfKeyword('object');

/** The shape `schema` gives the value it describes. */
export function shapeOfSchema(schema: JsonSchema): ValueShape {
  return { kind: 'schema', at: { schema, pointer: '', document: documentOf(schema) } };
}

/** A value of one of `shapes` at least. */
export const eitherShape = (shapes: ValueShape[]): ValueShape => anyOf(shapes) as ValueShape;

export const isAbsent = (member: MemberShape): member is Absent => member.kind === 'absent';

/** The shape of the member `key` (a name, or an index of an array) of a value of `shape`, or why it has none. */
export function memberOf(shape: ValueShape, key: string): MemberShape {
  switch (shape.kind) {
    case 'unknown':
      return shape;
    case 'schema':
      return memberOfSchema(shape.at, key, newVisits());
    case 'all':
      return allOf(shape.of.map((part) => memberOf(part, key)));
    case 'any':
      return anyOf(shape.of.map((part) => memberOf(part, key)));
    case 'members':
      return Object.hasOwn(shape.members, key)
        ? shape.members[key]
        : absent(shape.pointer, `${shape.otherwise}: it has no member "${key}"`);
  }
}

/** The shape at a JSON Pointer (RFC 6901, starting with "/") below a value of `shape`, or why nothing is there. */
export function atPointer(shape: ValueShape, pointer: string): MemberShape {
  let reached: MemberShape = shape;
  for (const token of pointer.slice(1).split('/')) {
    reached = memberOf(reached, token.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (isAbsent(reached)) return reached;
  }
  return reached;
}

/** Whether some schema of `shape` lists `key` in its `properties`: the value may have that member by name. */
export function declaresMember(shape: ValueShape, key: string): boolean {
  switch (shape.kind) {
    case 'unknown':
      return false;
    case 'schema':
      return declaredBy(shape.at, key, newVisits());
    case 'all':
    case 'any':
      return shape.of.some((part) => declaresMember(part, key));
    case 'members':
      return Object.hasOwn(shape.members, key);
  }
}

/** The types a value of `shape` may have (every type when the schemas do not tell). */
export function typesOf(shape: ValueShape): JsonTypes {
  switch (shape.kind) {
    case 'unknown':
      return ANY_TYPE;
    case 'schema':
      return typesOfSchema(shape.at, newVisits());
    case 'all':
      return shape.of.map(typesOf).reduce(intersection);
    case 'any':
      return shape.of.map(typesOf).reduce(union);
    case 'members':
      return OBJECT_TYPE;
  }
}

/**
 * The JSON pointer of the schema in `shape` that gives it types `wrong` says are wrong: of several
 * (`all`, `any`), the first whose own types are wrong, which exists whenever theirs together are.
 */
export function pointerOf(shape: ValueShape, wrong: (types: JsonTypes) => boolean): string {
  switch (shape.kind) {
    case 'unknown':
      return '';
    case 'schema':
      return pointerInSchema(shape.at, wrong, newVisits());
    case 'members':
      return shape.pointer;
    case 'all':
    case 'any':
      return pointerOf(shape.of.find((part) => wrong(typesOf(part))) ?? shape.of[0], wrong);
  }
}

/** The schema's own pointer when its own keywords give wrong types, else that of the first schema it applies that does. */
function pointerInSchema(at: Located, wrong: (types: JsonTypes) => boolean, visits: Visits): string {
  const { schema } = at;
  if (!isSchemaObject(schema)) return at.pointer;
  return deeper(visits, at.pointer, () => {
    const own = ownTypes(schema);
    if (!tellsNothing(own) && wrong(own)) return at.pointer;
    const target = typeof schema.$ref === 'string' ? resolveRef(at, schema.$ref) : undefined;
    const applied = [
      ...(target ? [target] : []),
      ...['allOf', 'anyOf', 'oneOf'].flatMap((keyword) => schemasIn(at, keyword)),
    ];
    const culprit = applied.find((part) => wrong(typesOfSchema(part, visits)));
    // A $ref's target lies elsewhere in the document: the $ref itself is where the value's schema is.
    return culprit && culprit !== target ? pointerInSchema(culprit, wrong, visits) : at.pointer;
  });
}

function memberOfSchema(at: Located, key: string, visits: Visits): MemberShape {
  const { schema, pointer } = at;
  if (schema === false) return absent(pointer, 'the schema is false: no value is there');
  if (!isSchemaObject(schema)) return UNKNOWN_SHAPE;
  return deeper(visits, UNKNOWN_SHAPE, () => {
    const parts = [ownMember(at, schema, key)];
    if (typeof schema.$ref === 'string') {
      const target = resolveRef(at, schema.$ref);
      parts.push(target ? memberOfSchema(target, key, visits) : UNKNOWN_SHAPE);
    }
    for (const branch of schemasIn(at, 'allOf')) parts.push(memberOfSchema(branch, key, visits));
    for (const keyword of ['anyOf', 'oneOf']) {
      const branches = schemasIn(at, keyword);
      if (branches.length === 0) continue;
      const members = branches.map((branch) => memberOfSchema(branch, key, visits));
      parts.push(anyOf(members, absent(`${pointer}/${keyword}`, `no schema of ${keyword} has a member "${key}"`)));
    }
    return allOf(parts);
  });
}

/** The member by this schema's own keywords: an object's member, or an array's item. */
function ownMember(at: Located, schema: SchemaObject, key: string): MemberShape {
  const types = ownTypes(schema);
  const index = ARRAY_INDEX.test(key) ? Number(key) : undefined;
  const sides: MemberShape[] = [];
  if (types.has('object')) sides.push(objectMember(at, schema, key));
  if (index !== undefined && types.has('array')) sides.push(arrayItem(at, schema, index));
  if (sides.length === 0) {
    const container = index === undefined ? 'an object' : 'an object or an array';
    return absent(at.pointer, `its type is ${typeNames(types).join(' or ') || 'none'}, not ${container}`);
  }
  return anyOf(sides);
}

function objectMember(at: Located, schema: SchemaObject, key: string): MemberShape {
  const parts: MemberShape[] = [];
  if (isSchemaObject(schema.properties) && Object.hasOwn(schema.properties, key))
    parts.push(located(child(at, `properties/${escapeToken(key)}`, schema.properties[key])));
  if (isSchemaObject(schema.patternProperties)) {
    for (const [pattern, member] of Object.entries(schema.patternProperties)) {
      const matched = matches(pattern, key);
      // Whether the pattern names it cannot be told: nor can whether additionalProperties applies.
      if (matched === undefined) return UNKNOWN_SHAPE;
      if (matched) parts.push(located(child(at, `patternProperties/${escapeToken(pattern)}`, member)));
    }
  }
  if (parts.length > 0) return allOf(parts);
  if (schema.additionalProperties === undefined) return UNKNOWN_SHAPE;
  if (schema.additionalProperties === false)
    return absent(at.pointer, `"${key}" is not among its properties, and additionalProperties is false`);
  return located(child(at, 'additionalProperties', schema.additionalProperties));
}

function arrayItem(at: Located, schema: SchemaObject, index: number): MemberShape {
  // Draft-07's list `items` gives the first items by position, `additionalItems` the rest.
  if (Array.isArray(schema.items)) {
    if (index < schema.items.length) return located(child(at, `items/${index}`, schema.items[index]));
    return restItem(at, 'additionalItems', schema.additionalItems);
  }
  if (Array.isArray(schema.prefixItems) && index < schema.prefixItems.length)
    return located(child(at, `prefixItems/${index}`, schema.prefixItems[index]));
  return restItem(at, 'items', schema.items);
}

function restItem(at: Located, keyword: string, schema: unknown): MemberShape {
  return schema === undefined ? UNKNOWN_SHAPE : located(child(at, keyword, schema));
}

/** The types this schema's own `type`, `const` and `enum` allow. */
function ownTypes(schema: SchemaObject): JsonTypes {
  let types = ANY_TYPE;
  if (Object.hasOwn(schema, 'type')) types = intersection(types, typesOfKeyword(schema.type));
  if (Object.hasOwn(schema, 'const')) types = intersection(types, new Set([typeOfValue(schema.const)]));
  if (Array.isArray(schema.enum)) types = intersection(types, new Set(schema.enum.map(typeOfValue)));
  return types;
}

function typesOfSchema(at: Located, visits: Visits): JsonTypes {
  const { schema } = at;
  if (schema === false) return NO_TYPE;
  if (!isSchemaObject(schema)) return ANY_TYPE;
  return deeper(visits, ANY_TYPE, () => {
    let types = ownTypes(schema);
    if (typeof schema.$ref === 'string') {
      const target = resolveRef(at, schema.$ref);
      if (target) types = intersection(types, typesOfSchema(target, visits));
    }
    for (const branch of schemasIn(at, 'allOf')) types = intersection(types, typesOfSchema(branch, visits));
    for (const keyword of ['anyOf', 'oneOf']) {
      const branches = schemasIn(at, keyword);
      if (branches.length > 0)
        types = intersection(types, branches.map((branch) => typesOfSchema(branch, visits)).reduce(union));
    }
    return types;
  });
}

function declaredBy(at: Located, key: string, visits: Visits): boolean {
  const { schema } = at;
  if (!isSchemaObject(schema)) return false;
  return deeper(visits, false, () => {
    if (isSchemaObject(schema.properties) && Object.hasOwn(schema.properties, key)) return true;
    const target = typeof schema.$ref === 'string' ? resolveRef(at, schema.$ref) : undefined;
    if (target && declaredBy(target, key, visits)) return true;
    return ['allOf', 'anyOf', 'oneOf'].some((keyword) =>
      schemasIn(at, keyword).some((branch) => declaredBy(branch, key, visits)),
    );
  });
}

/** All of `parts` hold: absent when one says so. */
function allOf(parts: MemberShape[]): MemberShape {
  const excluded = parts.find(isAbsent);
  if (excluded) return excluded;
  const told = (parts as ValueShape[]).filter((part) => part.kind !== 'unknown');
  if (told.length === 0) return UNKNOWN_SHAPE;
  return told.length === 1 ? told[0] : { kind: 'all', of: told };
}

/** One of `parts` at least holds: absent when all say so (then `whenNone`, or the first one's why). */
function anyOf(parts: MemberShape[], whenNone?: Absent): MemberShape {
  const present = parts.filter((part): part is ValueShape => !isAbsent(part));
  if (present.length === 0) return whenNone ?? parts[0] ?? UNKNOWN_SHAPE;
  if (present.some((part) => part.kind === 'unknown')) return UNKNOWN_SHAPE;
  return present.length === 1 ? present[0] : { kind: 'any', of: present };
}

function located(at: Located): MemberShape {
  if (at.schema === false) return absent(at.pointer, 'the schema is false: no value is there');
  return isSchemaObject(at.schema) ? { kind: 'schema', at } : UNKNOWN_SHAPE;
}

const absent = (pointer: string, why: string): Absent => ({ kind: 'absent', pointer, why });

const child = (at: Located, path: string, schema: unknown): Located => ({
  schema,
  pointer: `${at.pointer}/${path}`,
  document: at.document,
});

function schemasIn(at: Located, keyword: string): Located[] {
  const list = (at.schema as SchemaObject)[keyword];
  return Array.isArray(list) ? list.map((schema, index) => child(at, `${keyword}/${index}`, schema)) : [];
}

/** Whether `pattern` (an RE2 pattern, as the compiler runs them) finds a match in `key`; undefined when it cannot be run. */
function matches(pattern: string, key: string): boolean | undefined {
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern)).test(key);
  } catch {
    return undefined;
  }
}

/** The schema a `$ref` within the document names: the root, a JSON pointer or an anchor; undefined for any other. */
function resolveRef({ document }: Located, ref: string): Located | undefined {
  if (!document.followsRefs || !ref.startsWith('#')) return undefined;
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (!fragment.startsWith('/') && fragment !== '') return document.anchors.get(fragment);
  let schema: unknown = document.root;
  for (const token of fragment === '' ? [] : fragment.slice(1).split('/')) {
    const name = token.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof schema !== 'object' || schema === null || !Object.hasOwn(schema, name)) return undefined;
    schema = (schema as SchemaObject)[name];
  }
  return { schema, pointer: fragment, document };
}

/** The document of `root`, its anchors found, and whether a nested `$id` changes the base of its `$ref`s. */
function documentOf(root: JsonSchema): SchemaDocument {
  const document: SchemaDocument = { root, followsRefs: true, anchors: new Map() };
  // Agents' schemas nest at most 32 levels (USER_SCHEMA_LIMITS): so does this recursion.
  const visit = (value: unknown, pointer: string) => {
    if (typeof value !== 'object' || value === null) return;
    if (!Array.isArray(value)) {
      const { $id, $anchor } = value as SchemaObject;
      if (typeof $anchor === 'string') document.anchors.set($anchor, { schema: value, pointer, document });
      if (typeof $id === 'string' && $id.startsWith('#'))
        document.anchors.set($id.slice(1), { schema: value, pointer, document });
      else if (typeof $id === 'string' && value !== root) document.followsRefs = false;
    }
    for (const [key, member] of Object.entries(value)) visit(member, `${pointer}/${escapeToken(key)}`);
  };
  visit(root, '');
  return document;
}

const escapeToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

const isSchemaObject = (value: unknown): value is SchemaObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
