import { temporal } from '@temporalio/proto';
import { AgentServer, useAgentServer, acceptsAndHearsCancel } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call } from '../support/http';
import { waitForTask, startTask, reportOn } from '../support/tasks';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { tasksQuery, type TaskProgress } from '../../workflows/task-types';

const { EventType } = temporal.api.enums.v1;

/** Retries close together, so that a test sees several attempts within a few seconds. */
const quickRetry = (maxAttempts: number) => ({
  maxAttempts,
  initialIntervalMs: 200,
  backoffCoefficient: 1,
  maxIntervalMs: 200,
});

/** What an operator sees of a run in the Temporal Web UI, read through the same API the UI reads. */
describe('runs as the Temporal Web UI shows them', () => {
  const server = useAgentServer();
  const client = useTemporalClient();

  async function launch(agent: RegisteredAgent, extra: Record<string, unknown> = {}): Promise<string> {
    return startTask({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'seen' },
      ...extra,
    });
  }
  const handleOf = (taskId: string) => client().workflow.getHandle(`task-${taskId}`);
  const eventsOf = async (taskId: string) => (await handleOf(taskId).fetchHistory()).events ?? [];
  const summaryOf = (event: temporal.api.history.v1.IHistoryEvent) => {
    const payload = event.userMetadata?.summary;
    return payload?.data ? JSON.parse(Buffer.from(payload.data).toString('utf8')) : undefined;
  };

  it('shows a call to an agent that is down as one pending activity with its attempt, its last failure and its next retry', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('down', () => ({ status: 503, body: 'database is down for maintenance' })),
    });
    const taskId = await launch(agent, { retry: quickRetry(50) });
    const pending = await until(async () => {
      const [activity] = (await handleOf(taskId).describe()).raw.pendingActivities ?? [];
      return activity && (activity.attempt ?? 0) >= 3 && activity;
    }, 'the call at its third attempt');

    expect(pending.activityType?.name).toBe('callAgent');
    expect(pending.lastFailure?.message).toContain('HTTP 503: database is down for maintenance');
    expect(pending.lastFailure?.message).toContain(agent.mcpUrl);
    expect(pending.nextAttemptScheduleTime ?? pending.lastStartedTime).toBeTruthy();
    expect((await handleOf(taskId).describe()).raw.pendingActivities).toHaveLength(1);
    // GET /tasks/{taskId} tells the same story.
    const task = await waitForTask(taskId, { until: (seen) => seen.attempts >= 3 });
    expect(task.attemptErrors[0]).toMatchObject({
      code: 'AGENT_UNREACHABLE',
      message: expect.stringContaining('database is down'),
    });
    expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
  });

  it('names the network error of an agent nobody answers for', async () => {
    const closed = await AgentServer.start();
    const mcpUrl = closed.route('gone', () => ({ status: 200, body: {} }));
    await closed.close();
    const agent = await registerAgent({ mcpUrl });
    const taskId = await launch(agent, { retry: quickRetry(50) });
    const pending = await until(async () => {
      const [activity] = (await handleOf(taskId).describe()).raw.pendingActivities ?? [];
      return activity?.lastFailure && activity;
    }, 'a failed attempt');
    expect(pending.lastFailure?.message).toMatch(/ECONNREFUSED/);
    expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
  });

  it('adds no history events for further attempts: two or ten failed attempts make the same history', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('always-down', () => ({ status: 503, body: 'down' })) });
    const [two, ten] = await Promise.all([
      launch(agent, { retry: quickRetry(2) }),
      launch(agent, { retry: quickRetry(10) }),
    ]);
    expect(await waitForTask(two)).toMatchObject({
      status: 'failed',
      attempts: 2,
      error: { code: 'AGENT_UNREACHABLE' },
    });
    expect(await waitForTask(ten)).toMatchObject({
      status: 'failed',
      attempts: 10,
      error: { code: 'AGENT_UNREACHABLE' },
    });
    await Promise.all([handleOf(two).result(), handleOf(ten).result()]);
    const [twoEvents, tenEvents] = await Promise.all([eventsOf(two), eventsOf(ten)]);
    process.stdout.write(
      `[web-ui] history events of a task failing after 2 attempts: ${twoEvents.length}, after 10: ${tenEvents.length}\n`,
    );
    expect(tenEvents.map((event) => event.eventType)).toEqual(twoEvents.map((event) => event.eventType));
    const failed = tenEvents.find((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED);
    expect(failed?.activityTaskFailedEventAttributes?.failure?.message).toContain('HTTP 503: down');
  });

  it('names the wait for a report, and answers the tasks query with the live state the current details show', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('accepts', acceptsAndHearsCancel),
    });
    const taskId = await launch(agent);
    await waitForTask(taskId, { until: (seen) => seen.phase === 'awaiting_agent_report' });
    const timer = await until(
      async () => (await eventsOf(taskId)).find((event) => event.eventType === EventType.EVENT_TYPE_TIMER_STARTED),
      'the report timer',
    );
    expect(summaryOf(timer)).toBe(`report from ${agent.name} for task ${taskId}`);

    const expected: TaskProgress = {
      position: 0,
      taskId,
      agentId: agent.agentId,
      agentName: agent.name,
      operation: 'tools/echo',
      status: 'pending',
      attempts: 1,
      waitingFor: "agent's report",
    };
    expect(await handleOf(taskId).query(tasksQuery)).toEqual([expected]);
    const metadata = await handleOf(taskId).query<{ currentDetails: string }>('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toContain(
      `| 0 | ${agent.name} | tools/echo | pending | 1 | agent's report | ${taskId} |`,
    );

    expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { done: true } })).status).toBe(200);
    await handleOf(taskId).result();
    const ended = await handleOf(taskId).query(tasksQuery);
    expect(ended).toEqual([{ ...expected, status: 'completed' }].map(({ waitingFor: _, ...rest }) => rest));
  });
});
