import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call } from '../support/http';
import { registerTaskTool, useMcpServer } from '../support/mcp-server';
import { startTask, waitForTask, reportOn } from '../support/tasks';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { gate } from '../support/gate';

const { EventType } = temporal.api.enums.v1;

/** Ends the `report` tool's tasks once the test saw their status message. */
const reportsMayEnd = gate();

/** Tools that run as MCP tasks: the server answers tools/call with a task handle, and ends the task later, or never. */
function taskTools(server: McpServer): void {
  registerTaskTool(server, 'report', { topic: z.string() }, (taskId, store, { topic }) => {
    setTimeout(() => void store.updateTaskStatus(taskId, 'working', `halfway through ${topic}`), 300);
    const report = { content: [{ type: 'text', text: `report on ${topic}` }] };
    void reportsMayEnd.opened.then(() => store.storeTaskResult(taskId, 'completed', report));
  });
  registerTaskTool(server, 'doomed', {}, (taskId, store) => {
    const failure = { isError: true, content: [{ type: 'text', text: 'the archive is gone' }] };
    setTimeout(() => void store.storeTaskResult(taskId, 'failed', failure), 200);
  });
  registerTaskTool(server, 'endless', {}, () => undefined);
}

describe('MCP tasks: a tool the server runs on its side, polled by the workflow', () => {
  const mcp = useMcpServer({ setup: taskTools });
  const client = useTemporalClient();
  let agent: RegisteredAgent;

  beforeAll(async () => {
    agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
  });

  const run = (operation: string, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
    startTask({ agentId: agent.agentId, operation, params, ...extra });

  /** The MCP task the server created for a tools/call in the session `sessionId`. */
  const sessionOfCall = (toolName: string) =>
    mcp()
      .callsOf('tools/call')
      .filter((request) => request.toolName === toolName)
      .at(-1)?.headers['mcp-session-id'] as string;

  /** Waits for tasks/cancel in the session of the last call of `toolName`. */
  const cancelledAtServer = (toolName: string, what: string) => {
    const session = sessionOfCall(toolName);
    return until(
      () =>
        mcp()
          .callsOf('tasks/cancel')
          .some((request) => request.headers['mcp-session-id'] === session),
      what,
    );
  };

  it('imports the execution.taskSupport of task tools', () => {
    const report = agent.capabilities.tools.find((tool: { name: string }) => tool.name === 'report');
    expect(report.execution).toEqual({ taskSupport: 'required' });
  });

  it('polls the task in the session that created it, shows its status message, and ends with its result', async () => {
    const taskId = await run('tools/report', { topic: 'tides' });
    const working = await waitForTask(taskId, {
      until: (task) => task.message !== undefined || task.status !== 'pending',
    });
    expect(working).toMatchObject({
      status: 'pending',
      phase: 'awaiting_agent_report',
      message: 'halfway through tides',
    });
    reportsMayEnd.open();
    const ended = await waitForTask(taskId);
    expect(ended).toMatchObject({
      status: 'completed',
      attempts: 1,
      result: { content: [{ type: 'text', text: 'report on tides' }] },
    });

    const session = sessionOfCall('report');
    const polls = mcp()
      .callsOf('tasks/get')
      .filter((request) => request.headers['mcp-session-id'] === session);
    expect(polls.length).toBeGreaterThanOrEqual(2);
    expect(
      mcp()
        .callsOf('tasks/result')
        .filter((request) => request.headers['mcp-session-id'] === session),
    ).toHaveLength(1);
    // One initialisation for the call; the polls go on with its session.
    expect(
      mcp().requests.filter(
        (request) => request.httpMethod === 'DELETE' && request.headers['mcp-session-id'] === session,
      ),
    ).toHaveLength(1);

    // The Web UI shows each wait as a named timer, and each poll as an activity.
    const events = (await client().workflow.getHandle(`task-${taskId}`).fetchHistory()).events ?? [];
    const summaries = events
      .filter((event) => event.eventType === EventType.EVENT_TYPE_TIMER_STARTED)
      .map((event) => Buffer.from(event.userMetadata!.summary!.data!).toString('utf8'));
    expect(summaries.length).toBeGreaterThanOrEqual(2);
    expect(summaries[0]).toMatch(/^"next poll of MCP task .+ \(task [0-9a-f-]+\)"$/);
    const pollActivities = events.filter(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'pollMcpTask',
    );
    expect(pollActivities.length).toBe(summaries.length);
  });

  it('fails the task with AGENT_TOOL_ERROR when the MCP task ends failed', async () => {
    const ended = await waitForTask(await run('tools/doomed'));
    expect(ended).toMatchObject({
      status: 'failed',
      error: { code: 'AGENT_TOOL_ERROR', message: 'the archive is gone' },
    });
  });

  it('cancels the MCP task with tasks/cancel when the task is cancelled, and ends the session', async () => {
    const taskId = await run('tools/endless');
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    const session = sessionOfCall('endless');
    const cancelled = await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' });
    expect(cancelled.status).toBe(200);
    expect((await waitForTask(taskId)).status).toBe('cancelled');
    await cancelledAtServer('endless', 'tasks/cancel in the task session');
    await until(
      () =>
        mcp().requests.some(
          (request) => request.httpMethod === 'DELETE' && request.headers['mcp-session-id'] === session,
        ),
      'the session ended',
    );
  });

  it('ends with a report the agent sends meanwhile, and cancels the MCP task', async () => {
    const taskId = await run('tools/endless');
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    const reported = await reportOn(taskId, agent.apiKey, { status: 'completed', result: { via: 'report' } });
    expect(reported.status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { via: 'report' } });
    await cancelledAtServer('endless', 'tasks/cancel after the report');
  });

  it('fails at the task timeout and cancels the MCP task', async () => {
    const taskId = await run('tools/endless', {}, { timeoutMs: 2_500 });
    const ended = await waitForTask(taskId);
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'AGENT_TIMEOUT' } });
    expect(ended.error.message).toMatch(/MCP task .* did not end within 2500 ms/);
    await cancelledAtServer('endless', 'tasks/cancel after the timeout');
  });
});
