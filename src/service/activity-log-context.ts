import type { Context as ActivityContext } from '@temporalio/activity';
import type { ActivityInterceptors } from '@temporalio/worker';

/** The ids an activity's arguments name: a task's and its agent's. */
interface TaskIds {
  taskId?: string;
  agentId?: string;
}

/**
 * Adds the task's and the agent's ids to every line an activity logs, beside the workflowId and the
 * activity's own attributes the SDK adds: the activities take them in their first arguments
 * (CallAgentInput, a callback's target and payload, a frame's input), so they are read there once,
 * not passed to each log call.
 */
export function activityLogContext(): (ctx: ActivityContext) => ActivityInterceptors {
  return () => {
    let ids: TaskIds = {};
    return {
      inbound: {
        execute: (input, next) => {
          ids = idsIn(input.args);
          return next(input);
        },
      },
      outbound: {
        getLogAttributes: (attributes, next) => next({ ...ids, ...attributes }),
      },
    };
  };
}

function idsIn(args: unknown[]): TaskIds {
  const ids: TaskIds = {};
  for (const arg of args.slice(0, 2)) {
    if (typeof arg !== 'object' || arg === null) continue;
    const { taskId, agentId } = arg as Record<string, unknown>;
    if (typeof taskId === 'string') ids.taskId ??= taskId;
    if (typeof agentId === 'string') ids.agentId ??= agentId;
  }
  return ids;
}
