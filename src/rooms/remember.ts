/**
 * Adds `value` to `values`, forgetting the oldest beyond `limit` (a Set keeps insertion order): the
 * memory of what a process already sent, kept flat however long it runs.
 */
export function remember<T>(values: Set<T>, value: T, limit: number): void {
  values.add(value);
  if (values.size > limit) values.delete(values.values().next().value!);
}
