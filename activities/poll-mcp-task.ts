import { ApplicationFailure, Context } from '@temporalio/activity';
import { CallToolResultSchema, ErrorCode as JsonRpcError, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Dispatcher } from 'undici';
import { McpSession } from '../src/agent-calls/mcp-session';
import type { RecentAgents } from '../src/registry/recent-agents';
import type { TaskStore } from '../src/tasks/task-store';
import type { TaskClaims } from '../src/tasks/task-claims';
import type { SchemaChecks } from '../src/user-schemas/schema-checks';
import { TaskEventType } from '../src/task-events/task-event';
import { withElicitation, type ElicitationAnswerer } from '../src/agent-calls/mcp-elicitation';
import { TaskErrorCode, TaskPhase } from '../workflows/task-types';
import type { McpTaskPoll, PollMcpTaskInput } from '../workflows/activity-contract';
import { CALL_HEARTBEAT_MS, type CallAgentSettings } from './call-agent';
import { TaskElicitation } from './mcp-elicitation';
import { toolVerdict, type McpCallVerdict } from '../src/agent-calls/mcp-call';
import { answerOf } from './call-failures';
import { polledAnswer, polledTask } from './polled-task';

/**
 * One poll of a task an MCP agent runs on its side, in the session that created it: `tasks/get`,
 * and once it ended `tasks/result`, recorded as the task's outcome like a call's answer, and the
 * session closed. Its status message shows as the task's `message` meanwhile. A task waiting for
 * input gets `tasks/result` too, which delivers the server's elicitation requests: relayed to a
 * person as during a call (TaskElicitation). Failures are retried or final as a call's are.
 */
export function pollMcpTaskActivity(
  agents: RecentAgents,
  taskStore: TaskStore,
  claims: Pick<TaskClaims, 'findInput'>,
  schemas: SchemaChecks,
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
    // A heartbeat is how the activity hears of a cancellation while a person is asked for input.
    const heartbeats = setInterval(() => context.heartbeat(), CALL_HEARTBEAT_MS);
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
      const elicitation = new TaskElicitation(taskStore, claims, schemas, task, {
        deadline: Date.now() + settings.callTimeoutMs,
        signal: context.cancellationSignal,
        phase: TaskPhase.AWAITING_AGENT_REPORT,
      });
      verdict = await pollOnce(session, handle.mcpTaskId, elicitation, (message) =>
        taskStore
          .updateIfNotEnded(task, { message, event: { type: TaskEventType.PROGRESS, message } })
          .catch(() => false),
      );
      keepSession = verdict.kind === 'working';
    } catch (error) {
      verdict = answerOf(error, 'Polling', agent.endpointUrl);
    } finally {
      clearInterval(heartbeats);
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

type McpPollVerdict = McpCallVerdict | { kind: 'working'; pollIntervalMs?: number };

/**
 * tasks/get, and tasks/result once the MCP task ended or waits for input; a status message
 * meanwhile goes to `showMessage`.
 */
async function pollOnce(
  session: McpSession,
  mcpTaskId: string,
  elicitation: ElicitationAnswerer,
  showMessage: (message: string) => Promise<unknown>,
): Promise<McpPollVerdict> {
  const task = await session.client.experimental.tasks.getTask(mcpTaskId, session.requestOptions());
  if (task.status === 'working' || task.status === 'input_required') {
    if (task.statusMessage !== undefined) await showMessage(task.statusMessage);
    const working = {
      kind: 'working' as const,
      ...(task.pollInterval === undefined ? {} : { pollIntervalMs: task.pollInterval }),
    };
    return task.status === 'input_required' ? resultAfterInput(session, mcpTaskId, elicitation, working) : working;
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

/**
 * A task waiting for input: `tasks/result` delivers the requests the server queued for it (MCP
 * 2025-11-25, tasks: "input_required"), whose elicitations `elicitation` relays to a person, then
 * waits for the task's end. A task still running when the request's bound ends is `working`,
 * polled on.
 */
async function resultAfterInput(
  session: McpSession,
  mcpTaskId: string,
  elicitation: ElicitationAnswerer,
  working: McpPollVerdict,
): Promise<McpPollVerdict> {
  try {
    return toolVerdict(
      await withElicitation(elicitation, () =>
        session.client.experimental.tasks.getTaskResult(mcpTaskId, CallToolResultSchema, session.requestOptions()),
      ),
    );
  } catch (error) {
    if (error instanceof McpError && error.code === (JsonRpcError.RequestTimeout as number)) return working;
    throw error;
  }
}
