import { DEFAULT_RETRY, type PlannedTask } from '../../workflows/task-types';

/** A task as the workflow plans it, with the defaults a request leaves out; `more` overrides any field. */
export function plannedTask(taskId: string, agentId: string, more: Partial<PlannedTask> = {}): PlannedTask {
  return {
    taskId,
    agentId,
    agentName: agentId,
    operation: 'run',
    params: {},
    parents: [],
    executeOnParentFailure: false,
    timeoutMs: 60_000,
    retry: DEFAULT_RETRY,
    notifyAgent: false,
    ...more,
  };
}
