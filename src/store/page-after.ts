import type { Document, Filter } from 'mongodb';

/**
 * `filter`, narrowed to the documents that come after `last` in an order by `field` then `_id`, both
 * descending: the next page of a list read in that order, whatever was written since.
 */
export function pageAfter<T extends Document>(
  filter: Filter<T>,
  field: string,
  last: { value: unknown; id: string } | undefined,
): Filter<T> {
  if (!last) return filter;
  return {
    $and: [filter, { $or: [{ [field]: { $lt: last.value } }, { [field]: last.value, _id: { $lt: last.id } }] }],
  } as Filter<T>;
}
