import {
  fitsIn,
  intersection,
  tellsNothing,
  typeNames,
  typesOfKeyword,
  type JsonTypes,
} from '../user-schemas/json-types';
import { pointerOf, typesOf, type ValueShape } from '../user-schemas/schema-paths';
import type { PendingArgumentType } from '../../workflows/task-types';

/**
 * A value that cannot go where an argument puts it: the types its field may have (when the
 * outputSchema tells), those the argument's `type` lets through, those the parameter takes, and the
 * JSON pointers of the schemas that say so.
 */
export interface ArgumentMisfit {
  fieldTypes?: string[];
  passedTypes: string[];
  paramTypes?: string[];
  outputSchemaPointer?: string;
  inputSchemaPointer?: string;
}

/**
 * Whether a value of `field`'s shape, held to the argument's `type` when it has one, fits `param`:
 * undefined when it does or when the schemas cannot tell, else the misfit. Every type the value may
 * have must be one the parameter takes (integer fits number, not the reverse); `type` narrows them,
 * as a value of another type fails the task at run time, and must leave one.
 */
export function argumentMisfit(
  field: ValueShape,
  param: ValueShape,
  type: PendingArgumentType | undefined,
): ArgumentMisfit | undefined {
  const narrowed = (types: JsonTypes) => (type === undefined ? types : intersection(types, typesOfKeyword(type)));
  const fieldTypes = typesOf(field);
  const passed = narrowed(fieldTypes);
  const told = (wrong: (types: JsonTypes) => boolean) =>
    tellsNothing(fieldTypes) ? {} : { fieldTypes: typeNames(fieldTypes), outputSchemaPointer: pointerOf(field, wrong) };
  if (passed.size === 0) return { passedTypes: [], ...told((types) => narrowed(types).size === 0) };
  if (tellsNothing(passed)) return undefined;
  const paramTypes = typesOf(param);
  if (fitsIn(passed, paramTypes)) return undefined;
  return {
    ...told((types) => !fitsIn(narrowed(types), paramTypes)),
    passedTypes: typeNames(passed),
    paramTypes: typeNames(paramTypes),
    inputSchemaPointer: pointerOf(param, (types) => !fitsIn(passed, types)),
  };
}
