import { ApiError, ErrorCode } from '../http/errors';
import { itemArgumentsOf } from '../../workflows/item-arguments';
import { isPendingArgument, pendingArgumentsOf } from '../../workflows/pending-arguments';
import { PENDING_ARGUMENT_TYPES, type TaskRequest } from '../../workflows/task-types';

const INDEX_PATTERN = /^(0|[1-9][0-9]*)$/;

const invalid = (message: string) => new ApiError(ErrorCode.INVALID_COMPOSITION, message);

/**
 * The parents of each element as indices, after checking the graph (docs/api.md, "Compositions"):
 * parent indices exist, no element is its own parent, no cycle, every pending argument, condition
 * (`when`) and map (`forEach`) takes its value from one of the element's parents, and item arguments
 * stand only in a map. Each 400 names the offending element.
 */
export function checkCompositionGraph(requests: TaskRequest[]): number[][] {
  const parentsOf = requests.map((request, position) => {
    const parents = new Set<number>();
    for (const parent of request.parents ?? []) {
      if (!INDEX_PATTERN.test(parent) || Number(parent) >= requests.length) {
        throw invalid(
          `Task ${position}: parent "${parent}" is not an index of this composition (0 to ${requests.length - 1})`,
        );
      }
      if (Number(parent) === position) throw invalid(`Task ${position}: lists itself as a parent`);
      parents.add(Number(parent));
    }
    return [...parents];
  });

  requests.forEach((request, position) => {
    const isParent = (taskId: string) => INDEX_PATTERN.test(taskId) && parentsOf[position].includes(Number(taskId));
    if (request.when !== undefined && !isParent(request.when.source.taskId)) {
      throw invalid(
        `Task ${position}: its condition (when) reads task "${request.when.source.taskId}", which is not among its parents`,
      );
    }
    if (request.forEach !== undefined && !isParent(request.forEach.source.taskId)) {
      throw invalid(
        `Task ${position}: its forEach reads task "${request.forEach.source.taskId}", which is not among its parents`,
      );
    }
    for (const [name, argument] of pendingArgumentsOf(request.params)) {
      if (!isParent(argument.source.taskId)) {
        throw invalid(
          `Task ${position}: param "${name}" takes its value from task "${argument.source.taskId}", which is not among its parents`,
        );
      }
      checkArgumentType(position, name, argument);
    }
    for (const [name, argument] of itemArgumentsOf(request.params)) {
      if (request.forEach === undefined) {
        throw invalid(
          `Task ${position}: param "${name}" takes its value from an item, but the task has no forEach to run over items`,
        );
      }
      if (isPendingArgument(argument)) {
        throw new ApiError(
          ErrorCode.VALIDATION_ERROR,
          `Task ${position}: param "${name}" is both a pending argument and an item argument: its source names either a parent (taskId, field) or the item (item, field)`,
        );
      }
      if (argument.source.field === '') {
        throw new ApiError(
          ErrorCode.VALIDATION_ERROR,
          `Task ${position}: param "${name}" reads an empty field of the item: name a member, or leave field out for the element itself`,
        );
      }
      checkArgumentType(position, name, argument);
    }
  });

  const inCycle = elementInCycle(parentsOf);
  if (inCycle !== undefined) throw invalid(`Task ${inCycle}: its parents lead back to itself (a cycle)`);
  return parentsOf;
}

/** A pending or item argument's `type`: one the run can check. */
function checkArgumentType(position: number, name: string, { type }: { type?: string }): void {
  if (type !== undefined && !(PENDING_ARGUMENT_TYPES as readonly string[]).includes(type)) {
    throw new ApiError(
      ErrorCode.VALIDATION_ERROR,
      `Task ${position}: param "${name}" has type "${type}", expected one of ${PENDING_ARGUMENT_TYPES.join(', ')}`,
    );
  }
}

/** The smallest index on a cycle, or undefined for an acyclic graph (Kahn's algorithm). */
function elementInCycle(parentsOf: number[][]): number | undefined {
  const unfinishedParents = parentsOf.map((parents) => parents.length);
  const childrenOf = parentsOf.map(() => [] as number[]);
  parentsOf.forEach((parents, child) => parents.forEach((parent) => childrenOf[parent].push(child)));
  const ready = unfinishedParents.flatMap((count, position) => (count === 0 ? [position] : []));
  while (ready.length > 0) {
    for (const child of childrenOf[ready.pop()!]) {
      unfinishedParents[child] -= 1;
      if (unfinishedParents[child] === 0) ready.push(child);
    }
  }
  const stuck = unfinishedParents.findIndex((count) => count > 0);
  if (stuck < 0) return undefined;
  // A stuck element always has a stuck parent: walking up through them must come back to one seen.
  const stuckParent = (position: number) => parentsOf[position].find((parent) => unfinishedParents[parent] > 0)!;
  const stepOf = new Map<number, number>();
  let current = stuck;
  while (!stepOf.has(current)) {
    stepOf.set(current, stepOf.size);
    current = stuckParent(current);
  }
  const cycle = [...stepOf.keys()].slice(stepOf.get(current));
  return Math.min(...cycle);
}
