// Where a level of a layered DAG spends its time, read from the composition's event log (the `at`
// of each task's started and completed events, as the service wrote them).

export interface LoggedEvent {
  taskId: string;
  type: string;
  at: string;
}

/** Per task: its orchestration and its call, in ms. */
export interface TaskTimes {
  level: number;
  /**
   * What came before its call: from the last parent's completed event (for the first level, the
   * task's created event) to its started event: the workflow and the store between the calls.
   */
  orchestration: number;
  /** Started → completed: the call activity, from its first write to the recorded answer. */
  call: number;
}

/**
 * The times of every task of a DAG whose tasks (`taskIds`, in request order) form levels of
 * `width`, each task of a level depending on every task of the level before.
 */
export function taskTimes(events: LoggedEvent[], taskIds: string[], width: number): TaskTimes[] {
  const first = (type: string) => {
    const at = new Map<string, number>();
    for (const event of events)
      if (event.type === type && !at.has(event.taskId)) at.set(event.taskId, Date.parse(event.at));
    return at;
  };
  const [created, started, completed] = [first('created'), first('started'), first('completed')];
  return taskIds.map((taskId, position) => {
    const level = Math.floor(position / width);
    const parents = taskIds.slice((level - 1) * width, level * width);
    const before = level === 0 ? created.get(taskId)! : Math.max(...parents.map((parent) => completed.get(parent)!));
    return { level, orchestration: started.get(taskId)! - before, call: completed.get(taskId)! - started.get(taskId)! };
  });
}
