// Recognises and fills in a map's item arguments. Pure functions shared by the API (checks before
// a start) and the activities that create a map's items: no Node modules here.
import { fieldOf, hasType, type Substitution } from './pending-arguments';
import { TaskErrorCode, type ItemArgument } from './task-types';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A top-level param value shaped `{source: {item: true, field?: string}, type?}`. */
export function isItemArgument(value: unknown): value is ItemArgument {
  if (!isPlainObject(value) || !isPlainObject(value.source)) return false;
  const { item, field } = value.source;
  return item === true && (field === undefined || typeof field === 'string');
}

export function itemArgumentsOf(params: Record<string, unknown>): Array<[string, ItemArgument]> {
  return Object.entries(params).filter((entry): entry is [string, ItemArgument] => isItemArgument(entry[1]));
}

/**
 * Params with every item argument replaced by the element, or by its member at `field` (a name or a
 * JSON Pointer, as a pending argument reads a parent's result). `index` names the item in errors.
 */
export function substituteItem(params: Record<string, unknown>, element: unknown, index: number): Substitution {
  // Entries, not assignments: a param named "__proto__" would set the prototype instead of a field.
  const resolved: Array<[string, unknown]> = [];
  for (const [name, value] of Object.entries(params)) {
    if (!isItemArgument(value)) {
      resolved.push([name, value]);
      continue;
    }
    const { field } = value.source;
    let substituted: unknown = element;
    if (field !== undefined) {
      const found =
        typeof element === 'object' && element !== null
          ? fieldOf(element as Record<string, unknown>, field, true)
          : undefined;
      if (found === undefined) {
        return {
          error: {
            code: TaskErrorCode.MISSING_FIELD,
            message: `Param "${name}": element ${index} has no field "${field}"`,
          },
        };
      }
      substituted = found.value;
    }
    if (value.type !== undefined && !hasType(substituted, value.type)) {
      return {
        error: {
          code: TaskErrorCode.TYPE_MISMATCH,
          message: `Param "${name}": ${field === undefined ? `element ${index}` : `field "${field}" of element ${index}`} is not of type ${value.type}`,
          details: {
            expected: value.type,
            actual: Array.isArray(substituted) ? 'array' : substituted === null ? 'null' : typeof substituted,
          },
        },
      };
    }
    resolved.push([name, substituted]);
  }
  return { params: Object.fromEntries(resolved) };
}
