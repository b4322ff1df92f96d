import { ApplicationFailure, Context } from '@temporalio/activity';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Dispatcher } from 'undici';
import { McpSession } from '../src/agent-calls/mcp-session';
import type { RecentAgents } from '../src/registry/recent-agents';
import type { TaskStore } from '../src/tasks/task-store';
import { TaskEventType } from '../src/task-events/task-event';
import { TaskErrorCode } from '../workflows/task-types';
import type { McpTaskPoll, PollMcpTaskInput } from '../workflows/activity-contract';
import type { CallAgentSettings } from './call-agent';
import { toolVerdict, type McpCallVerdict } from '../src/agent-calls/mcp-call';
import { answerOf } from './call-failures';
import { polledAnswer, polledTask } from './polled-task';

/**
 * One poll of a task an MCP agent runs on its side, in the session that created it: `tasks/get`,
 * and once it ended `tasks/result`, recorded as the task's outcome like a call's answer, and the
 * session closed. Its status message shows as the task's `message` meanwhile. Failures are retried
 * or final as a call's are.
 */
export function pollMcpTaskActivity(
  agents: RecentAgents,
  taskStore: TaskStore,
  dispatcher: Dispatcher,
  settings: CallAgentSettings,
) {
  return async function pollMcpTask({
    taskId,
    agentId,
    handle,
    attempt,
    keepsResult,
  }: PollMcpTaskInput): Promise<McpTaskPoll> {
    const context = Context.current();
    const { task, agent } = await polledTask(taskStore, agents, taskId, agentId);
    let verdict: McpCallVerdict | { kind: 'working'; pollIntervalMs?: number };
    let session: McpSession | undefined;
    // The session ends with the MCP task: kept while the task works.
    let keepSession = false;
    try {
      session = await McpSession.open(
        agent,
        {
          dispatcher,
          timeoutMs: settings.callTimeoutMs,
          maxReplyBytes: settings.maxReplyBytes,
          signal: context.cancellationSignal,
        },
        handle,
      );
      verdict = await pollOnce(session, handle.mcpTaskId, (message) =>
        taskStore
          .updateIfNotEnded(task, { message, event: { type: TaskEventType.PROGRESS, message } })
          .catch(() => false),
      );
      keepSession = verdict.kind === 'working';
    } catch (error) {
      verdict = answerOf(error, 'Polling', agent.endpointUrl);
    } finally {
      await session?.close(keepSession);
    }
    if (verdict.kind === 'working') return verdict;
    if (verdict.kind === 'mcpTask')
      throw ApplicationFailure.nonRetryable(
        'The MCP server answered a poll with a new task',
        TaskErrorCode.AGENT_PROTOCOL_ERROR,
      );
    return polledAnswer(verdict, taskStore, { task, attempt, keepsResult, url: agent.endpointUrl });
  };
}

/** tasks/get, and tasks/result once the MCP task ended; a status message meanwhile goes to `showMessage`. */
async function pollOnce(
  session: McpSession,
  mcpTaskId: string,
  showMessage: (message: string) => Promise<unknown>,
): Promise<McpCallVerdict | { kind: 'working'; pollIntervalMs?: number }> {
  const task = await session.client.experimental.tasks.getTask(mcpTaskId, session.requestOptions());
  if (task.status === 'working' || task.status === 'input_required') {
    if (task.statusMessage !== undefined) await showMessage(task.statusMessage);
    return { kind: 'working', ...(task.pollInterval === undefined ? {} : { pollIntervalMs: task.pollInterval }) };
  }
  if (task.status === 'cancelled') {
    return {
      kind: 'failed',
      error: {
        code: TaskErrorCode.AGENT_TOOL_ERROR,
        message: task.statusMessage ?? 'The MCP server cancelled its task',
      },
    };
  }
  return toolVerdict(
    await session.client.experimental.tasks.getTaskResult(mcpTaskId, CallToolResultSchema, session.requestOptions()),
  );
}
