import type { LoggedTask } from '../../src/task-events/log-reader';

/** A task as a log's reader reads it: t1 of agent a1, pending, at `at`, with `overrides`. */
export function loggedTask(at: Date, overrides: Partial<LoggedTask> = {}): LoggedTask {
  return {
    _id: 't1',
    agentId: 'a1',
    operation: 'tools/echo',
    status: 'pending',
    eventSeq: 1,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}
