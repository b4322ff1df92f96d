import { ApiError, ErrorCode } from '../http/errors';
import type { Agent, CapabilityEntry, ToolDefinition } from '../registry/agent';
import { typeNames } from '../user-schemas/json-types';
import {
  isAbsent,
  memberOf,
  pointerOf,
  typesOf,
  type MemberShape,
  type ValueShape,
} from '../user-schemas/schema-paths';
import { itemArgumentsOf } from '../../workflows/item-arguments';
import { pendingArgumentsOf } from '../../workflows/pending-arguments';
import type { PendingArgumentType, TaskRequest } from '../../workflows/task-types';
import { argumentMisfit, type ArgumentMisfit } from './argument-fit';
import { paramsShapeOf, resultField, resultShapeOf } from './result-fields';

/** An element of a composition as the launcher found it: its agent and the entry its operation names. */
export interface ComposedTool {
  agent: Pick<Agent, 'id' | 'name'>;
  operation: string;
  entry: ToolDefinition | CapabilityEntry;
}

/** `details.mismatch` of the refusal: the parent's outputSchema has no such field, the tool's inputSchema no such parameter, or their types do not fit. */
const ArgumentMismatch = {
  MISSING_FIELD: 'missing_field',
  UNKNOWN_PARAM: 'unknown_param',
  TYPE: 'type',
} as const;
type ArgumentMismatch = (typeof ArgumentMismatch)[keyof typeof ArgumentMismatch];

/**
 * Who reads `field` of the result of task `parent`, in task `task`: its param `param` (for an item
 * argument, `item`: each element of that field, or the element's member `item.field`), its condition
 * (`when`), or its map (`forEach`).
 */
type ArgumentRead = { task: number; parent: number; field: string } & (
  { param: string; item?: { field?: string } } | { condition: true } | { forEach: true }
);

/**
 * Refuses, before anything runs, a composition in which a pending or item argument surely cannot be
 * filled, a condition surely reads nothing, or a map surely has no array to run over: the parent's
 * outputSchema has no such field (or its elements none), the consuming tool's inputSchema no such
 * parameter, or the field's types do not fit the parameter's or the argument's `type`. Where a
 * schema cannot tell (none, or open at that place), the argument passes, and is checked at run time
 * as before. `400 INVALID_COMPOSITION` naming both tasks and the JSON pointers (docs/api.md,
 * "Compositions"). `tools[i]` is element i's; the graph is checked already (every source is a
 * parent index, item arguments stand only in a map).
 */
export function checkTypedArguments(requests: TaskRequest[], tools: ComposedTool[]): void {
  const results = new Map<number, ValueShape>();
  const resultOf = (index: number) =>
    results.get(index) ?? results.set(index, resultShapeOf(tools[index].entry)).get(index)!;
  /** What `read` finds in `value` at `field`; a refusal when the parent's outputSchema surely has none. */
  const fieldRead = (read: ArgumentRead, value: ValueShape, field: string) => {
    const found = resultField(value, field);
    if (!isAbsent(found)) return found;
    throw refusal(
      tools,
      read,
      ArgumentMismatch.MISSING_FIELD,
      `which its outputSchema does not have: at outputSchema#${found.pointer}, ${found.why}`,
      { outputSchemaPointer: found.pointer },
    );
  };
  const parentField = (read: ArgumentRead) => fieldRead(read, resultOf(read.parent), read.field);
  requests.forEach((request, task) => {
    // A condition on a field no result can have would skip its task on every run.
    if (request.when)
      parentField({
        task,
        parent: Number(request.when.source.taskId),
        field: request.when.source.field,
        condition: true,
      });
    const params = paramsShapeOf(tools[task].entry);
    for (const [param, argument] of pendingArgumentsOf(request.params)) {
      const read = { task, param, parent: Number(argument.source.taskId), field: argument.source.field };
      checkFit(tools, read, parentField(read), params, argument.type);
    }
    if (!request.forEach) return;
    const { taskId, field } = request.forEach.source;
    const element = elementOf(tools, { task, parent: Number(taskId), field, forEach: true }, parentField);
    // An array that surely has no elements: the map completes at once, and no item argument is read.
    if (isAbsent(element)) return;
    for (const [param, argument] of itemArgumentsOf(request.params)) {
      const itemField = argument.source.field;
      const read = {
        task,
        param,
        parent: Number(taskId),
        field,
        item: itemField === undefined ? {} : { field: itemField },
      };
      const value = itemField === undefined ? element : fieldRead(read, element, itemField);
      checkFit(tools, read, value, params, argument.type);
    }
  });
}

/**
 * The shape of the elements of the array a map runs over (its first item's, as the outputSchema
 * describes them), or why it surely has none; a refusal when the field surely is no array.
 */
function elementOf(
  tools: ComposedTool[],
  read: ArgumentRead,
  parentField: (read: ArgumentRead) => ValueShape,
): MemberShape {
  const array = parentField(read);
  const types = typesOf(array);
  if (!types.has('array')) {
    const outputSchemaPointer = pointerOf(array, (wrong) => !wrong.has('array'));
    throw refusal(
      tools,
      read,
      ArgumentMismatch.TYPE,
      `but its outputSchema gives it ${listed(typeNames(types), 'no type')} (outputSchema#${outputSchemaPointer}), not an array`,
      { fieldTypes: typeNames(types), outputSchemaPointer },
    );
  }
  return memberOf(array, '0');
}

/** Refuses an argument read as `field` that surely does not go into the param `read.param` of `params`. */
function checkFit(
  tools: ComposedTool[],
  read: ArgumentRead & { param: string },
  field: ValueShape,
  params: ValueShape,
  type: PendingArgumentType | undefined,
): void {
  const target = memberOf(params, read.param);
  if (isAbsent(target)) {
    throw refusal(
      tools,
      read,
      ArgumentMismatch.UNKNOWN_PARAM,
      `but ${tools[read.task].operation} takes no such param: at inputSchema#${target.pointer}, ${target.why}`,
      { inputSchemaPointer: target.pointer },
    );
  }
  const misfit = argumentMisfit(field, target, type);
  if (misfit)
    throw refusal(tools, read, ArgumentMismatch.TYPE, misfitText(misfit, type), {
      ...misfit,
      ...(type === undefined ? {} : { argumentType: type }),
    });
}

function misfitText(misfit: ArgumentMisfit, type: string | undefined): string {
  const { fieldTypes, outputSchemaPointer, paramTypes, inputSchemaPointer } = misfit;
  const field =
    fieldTypes === undefined
      ? 'no outputSchema tells its type'
      : `its outputSchema gives it ${listed(fieldTypes, 'no type')} (outputSchema#${outputSchemaPointer})`;
  if (paramTypes === undefined)
    return type === undefined ? `but ${field}: no value fits` : `but ${field}, never the argument's type "${type}"`;
  const passed =
    type === undefined ? '' : `, the argument's type "${type}" lets ${listed(misfit.passedTypes, 'none')} through`;
  return `but ${field}${passed}, and the param takes ${listed(paramTypes, 'no value')} (inputSchema#${inputSchemaPointer})`;
}

const listed = (types: string[], none: string) => (types.length === 0 ? none : types.join(' or '));

function refusal(
  tools: ComposedTool[],
  read: ArgumentRead,
  mismatch: ArgumentMismatch,
  why: string,
  pointersAndTypes: Record<string, unknown>,
): ApiError {
  const { task, parent, field } = read;
  const named = (index: number) => ({
    index,
    agentId: tools[index].agent.id,
    agentName: tools[index].agent.name,
    operation: tools[index].operation,
  });
  const taskName = (index: number) => `${tools[index].agent.name}: ${tools[index].operation}`;
  const [reader, reads, role] = readerOf(read);
  return new ApiError(
    ErrorCode.INVALID_COMPOSITION,
    `Task ${task} (${taskName(task)}): ${reader} reads ${reads}field "${field}" of task ${parent} (${taskName(parent)}), ${why}`,
    {
      mismatch,
      task: { ...named(task), ...role },
      parent: { ...named(parent), field },
      ...pointersAndTypes,
    },
  );
}

/** Who reads, what it reads of the parent's field, and how `details.task` names the reader. */
function readerOf(read: ArgumentRead): [string, string, Record<string, unknown>] {
  if ('condition' in read) return ['its condition (when)', '', { condition: true }];
  if ('forEach' in read) return ['its map (forEach)', '', { forEach: true }];
  const reader = `param "${read.param}"`;
  if (read.item === undefined) return [reader, '', { param: read.param }];
  const { field } = read.item;
  return field === undefined
    ? [reader, 'each element of ', { param: read.param, item: true }]
    : [reader, `field "${field}" of each element of `, { param: read.param, item: true, itemField: field }];
}
