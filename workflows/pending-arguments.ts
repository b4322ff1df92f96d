// Recognises and resolves pending arguments. Pure functions used by the API (checks before a start)
// and by the composition workflow (substitution at run time): no Node modules here.
import {
  TaskErrorCode,
  type PendingArgument,
  type PendingArgumentType,
  type TaskError,
  type TaskResult,
} from './task-types';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A top-level param value shaped `{source: {taskId: string, field: string}, type?}`. */
export function isPendingArgument(value: unknown): value is PendingArgument {
  if (!isPlainObject(value) || !isPlainObject(value.source)) return false;
  return typeof value.source.taskId === 'string' && typeof value.source.field === 'string';
}

export function pendingArgumentsOf(params: Record<string, unknown>): Array<[string, PendingArgument]> {
  return Object.entries(params).filter((entry): entry is [string, PendingArgument] => isPendingArgument(entry[1]));
}

export function hasType(value: unknown, type: PendingArgumentType): boolean {
  switch (type) {
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
    case 'integer':
      return Number.isInteger(value);
    default:
      return typeof value === type;
  }
}

export type Substitution = { params: Record<string, unknown> } | { error: TaskError };

/** Whether some pending argument of `params` names its field with a JSON Pointer. */
export const usesPointers = (params: Record<string, unknown>): boolean =>
  pendingArgumentsOf(params).some(([, argument]) => argument.source.field.startsWith('/'));

/**
 * What `field` names in a parent's result: the top-level member of that name, or else, when
 * `pointers` and the field starts with "/", the value at that JSON Pointer (RFC 6901), which reaches
 * into objects and arrays (`/content/0/text` of an MCP tool's answer). Undefined when there is none.
 */
export function fieldOf(result: TaskResult, field: string, pointers: boolean): { value: unknown } | undefined {
  if (Object.prototype.hasOwnProperty.call(result, field)) return { value: result[field] };
  if (!pointers || !field.startsWith('/')) return undefined;
  let value: unknown = result;
  for (const token of field.slice(1).split('/')) {
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(value) && /^(?:0|[1-9][0-9]*)$/.test(key) && Number(key) < value.length)
      value = value[Number(key)];
    else if (isPlainObject(value) && Object.prototype.hasOwnProperty.call(value, key)) value = value[key];
    else return undefined;
  }
  return { value };
}

/**
 * Params with every pending argument replaced by its parent's result field. `results[index]` is
 * undefined for a parent that did not complete: its arguments resolve to null (executeOnParentFailure).
 * `pointers`: a field may be a JSON Pointer (runs that began before pointers read top-level members only).
 */
export function substitute(
  params: Record<string, unknown>,
  results: ReadonlyArray<TaskResult | undefined>,
  pointers = true,
): Substitution {
  // Entries, not assignments: a param named "__proto__" would set the prototype instead of a field.
  const resolved: Array<[string, unknown]> = [];
  for (const [name, value] of Object.entries(params)) {
    if (!isPendingArgument(value)) {
      resolved.push([name, value]);
      continue;
    }
    const { taskId, field } = value.source;
    const parentResult = results[Number(taskId)];
    if (parentResult === undefined) {
      resolved.push([name, null]);
      continue;
    }
    const found = fieldOf(parentResult, field, pointers);
    if (found === undefined) {
      return {
        error: {
          code: TaskErrorCode.MISSING_FIELD,
          message: `Param "${name}": the result of task ${taskId} has no field "${field}"`,
        },
      };
    }
    const substituted = found.value;
    if (value.type !== undefined && !hasType(substituted, value.type)) {
      return {
        error: {
          code: TaskErrorCode.TYPE_MISMATCH,
          message: `Param "${name}": field "${field}" of task ${taskId} is not of type ${value.type}`,
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
