import type { CapabilityEntry, ToolDefinition } from '../registry/agent';
import { fitsIn, typesOfKeyword } from '../user-schemas/json-types';
import {
  atPointer,
  declaresMember,
  eitherShape,
  memberOf,
  shapeOfSchema,
  typesOf,
  UNKNOWN_SHAPE,
  type MemberShape,
  type ValueShape,
} from '../user-schemas/schema-paths';

const OBJECT = typesOfKeyword('object');

/**
 * What a task's result may be, by its tool's `outputSchema` (else `annotations.outputSchema`): the
 * `result` an `acs` agent answers or reports, an `mcp` tool's `structuredContent` (which MCP requires
 * of a tool that declares an outputSchema), an `a2a` skill's data part. A value that is not an object
 * becomes `{"0": value}` in the result (normaliseResult). Nothing is known of the results of an
 * entry without one: prompts, resources, tools that declare none.
 */
export function resultShapeOf(entry: ToolDefinition | CapabilityEntry): ValueShape {
  const { outputSchema, annotations } = entry as Partial<ToolDefinition>;
  const output = outputSchema ?? annotations?.outputSchema;
  if (typeof output !== 'object' || output === null) return UNKNOWN_SHAPE;
  const described = shapeOfSchema(output);
  const types = typesOf(described);
  if (fitsIn(types, OBJECT)) return described;
  const wrapped: ValueShape = {
    kind: 'members',
    members: { 0: described },
    pointer: '',
    otherwise: 'the outputSchema describes values that are not objects, which results hold as {"0": value}',
  };
  return types.has('object') ? eitherShape([described, wrapped]) : wrapped;
}

/** What the inputSchema of `entry` says of its params: nothing without one. */
export const paramsShapeOf = (entry: ToolDefinition | CapabilityEntry): ValueShape =>
  entry.inputSchema ? shapeOfSchema(entry.inputSchema) : UNKNOWN_SHAPE;

/**
 * The shape of `field` of a result of shape `result`, or why the result surely has no such field.
 * As pending arguments read it at run time (workflows/pending-arguments.ts): the member of that
 * name, or, for a field that starts with "/", the value at that JSON Pointer, unless the outputSchema
 * declares a member of that very name. One read serves every reader of a parent's result field.
 */
export function resultField(result: ValueShape, field: string): MemberShape {
  if (!field.startsWith('/') || declaresMember(result, field)) return memberOf(result, field);
  return atPointer(result, field);
}
