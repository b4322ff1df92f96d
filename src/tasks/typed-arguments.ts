import { ApiError, ErrorCode } from '../http/errors';
import type { Agent, CapabilityEntry, ToolDefinition } from '../registry/agent';
import { isAbsent, memberOf, type ValueShape } from '../user-schemas/schema-paths';
import { pendingArgumentsOf } from '../../workflows/pending-arguments';
import type { TaskRequest } from '../../workflows/task-types';
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

/** One read of `field` of the result of task `parent` by task `task`: for its param `param`, or for its condition (`when`). */
interface ArgumentRead {
  task: number;
  param?: string;
  parent: number;
  field: string;
}

/**
 * Refuses, before anything runs, a composition in which a pending argument surely cannot be filled,
 * or a condition surely reads nothing: the parent's outputSchema has no such field, the consuming tool's inputSchema no such parameter,
 * or the field's types do not fit the parameter's or the argument's `type`. Where a schema cannot
 * tell (none, or open at that place), the argument passes, and is checked at run time as before.
 * `400 INVALID_COMPOSITION` naming both tasks and the JSON pointers (docs/api.md, "Compositions").
 * `tools[i]` is element i's; the graph is checked already (every source is a parent index).
 */
export function checkTypedArguments(requests: TaskRequest[], tools: ComposedTool[]): void {
  const results = new Map<number, ValueShape>();
  const resultOf = (index: number) =>
    results.get(index) ?? results.set(index, resultShapeOf(tools[index].entry)).get(index)!;
  /** The field `read` reads; a refusal when the parent's outputSchema surely has no such field. */
  const fieldRead = (read: ArgumentRead) => {
    const field = resultField(resultOf(read.parent), read.field);
    if (!isAbsent(field)) return field;
    throw refusal(
      tools,
      read,
      ArgumentMismatch.MISSING_FIELD,
      `which its outputSchema does not have: at outputSchema#${field.pointer}, ${field.why}`,
      { outputSchemaPointer: field.pointer },
    );
  };
  requests.forEach((request, task) => {
    // A condition on a field no result can have would skip its task on every run.
    if (request.when) fieldRead({ task, parent: Number(request.when.source.taskId), field: request.when.source.field });
    const params = paramsShapeOf(tools[task].entry);
    for (const [param, argument] of pendingArgumentsOf(request.params)) {
      const read: ArgumentRead = { task, param, parent: Number(argument.source.taskId), field: argument.source.field };
      const field = fieldRead(read);
      const target = memberOf(params, param);
      if (isAbsent(target)) {
        throw refusal(
          tools,
          read,
          ArgumentMismatch.UNKNOWN_PARAM,
          `but ${tools[task].operation} takes no such param: at inputSchema#${target.pointer}, ${target.why}`,
          { inputSchemaPointer: target.pointer },
        );
      }
      const misfit = argumentMisfit(field, target, argument.type);
      if (misfit)
        throw refusal(tools, read, ArgumentMismatch.TYPE, misfitText(misfit, argument.type), {
          ...misfit,
          ...(argument.type === undefined ? {} : { argumentType: argument.type }),
        });
    }
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
  { task, param, parent, field }: ArgumentRead,
  mismatch: ArgumentMismatch,
  why: string,
  pointersAndTypes: Record<string, unknown>,
): ApiError {
  const named = (index: number) => ({
    index,
    agentId: tools[index].agent.id,
    agentName: tools[index].agent.name,
    operation: tools[index].operation,
  });
  const taskName = (index: number) => `${tools[index].agent.name}: ${tools[index].operation}`;
  return new ApiError(
    ErrorCode.INVALID_COMPOSITION,
    `Task ${task} (${taskName(task)}): ${param === undefined ? 'its condition (when)' : `param "${param}"`} reads field "${field}" of task ${parent} (${taskName(parent)}), ${why}`,
    {
      mismatch,
      task: { ...named(task), ...(param === undefined ? { condition: true } : { param }) },
      parent: { ...named(parent), field },
      ...pointersAndTypes,
    },
  );
}
