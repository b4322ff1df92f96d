import { accepts, completes, useAgentServer } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call } from '../support/http';
import { createSchedule, deleteSchedule, readSchedule, untilRuns } from '../support/schedules';
import { reportOn, waitForTask } from '../support/tasks';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';

/**
 * Overlap and pause, judged against what Temporal counts and against a schedule that runs beside
 * the one under test: no assertion on how long anything took.
 */
describe('schedule overlap and pause', () => {
  const server = useAgentServer();
  const temporal = useTemporalClient();
  let reporting: RegisteredAgent;
  let quick: RegisteredAgent;
  const describeTemporal = (scheduleId: string) => temporal().schedule.getHandle(`schedule-${scheduleId}`).describe();
  const everySecond = (agent: RegisteredAgent, overlap?: string, paused?: boolean) => ({
    spec: { intervalMs: 1_000 },
    action: { task: { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'tick' } } },
    ...(overlap ? { overlap } : {}),
    ...(paused === undefined ? {} : { paused }),
  });

  beforeAll(async () => {
    // Answers 202 and reports only when the test does: each run's task stays pending until then.
    reporting = await registerAgent({ mcpUrl: server().route('reports-later', accepts) });
    quick = await registerAgent({ mcpUrl: server().route('quick', completes({ text: 'ok' })) });
  });

  it('skips the runs due while the last run’s task still runs; allowAll starts them', async () => {
    const skipping = await createSchedule(everySecond(reporting, 'skip'));
    const allowing = await createSchedule(everySecond(reporting, 'allowAll'));
    try {
      const [first] = await untilRuns(skipping.scheduleId, 1);
      // Temporal skips a due run because the first run still waits for its task.
      await until(
        async () => (await describeTemporal(skipping.scheduleId)).info.numActionsSkippedOverlap >= 2,
        'runs skipped for overlap',
      );
      expect((await readSchedule(skipping.scheduleId)).recentRuns).toEqual([first]);
      // Meanwhile allowAll started a run at each due time, each task pending beside the others.
      const allowed = await untilRuns(allowing.scheduleId, 3);
      for (const run of allowed) expect((await waitForTask(run.taskId!, { timeoutMs: 0 })).status).toBe('pending');
      expect((await describeTemporal(allowing.scheduleId)).info.numActionsSkippedOverlap).toBe(0);

      // The first task ends: the next due run starts.
      await waitForTask(first.taskId!, { until: (task) => task.phase === 'awaiting_agent_report' });
      expect((await reportOn(first.taskId!, reporting.apiKey, { status: 'completed', result: {} })).status).toBe(200);
      const [second] = await untilRuns(skipping.scheduleId, 2);
      expect(second.taskId).not.toBe(first.taskId);
    } finally {
      await deleteSchedule(skipping.scheduleId);
      await deleteSchedule(allowing.scheduleId);
    }
  });

  it('starts no run while paused, and runs again once unpaused', async () => {
    const paused = await createSchedule(everySecond(quick, 'allowAll', true));
    const beside = await createSchedule(everySecond(quick, 'allowAll'));
    try {
      expect((await readSchedule(paused.scheduleId)).paused).toBe(true);
      await untilRuns(beside.scheduleId, 3);
      expect((await readSchedule(paused.scheduleId)).recentRuns).toEqual([]);
      expect((await describeTemporal(paused.scheduleId)).info.numActionsTaken).toBe(0);

      const unpaused = await call('POST', `/schedules/${paused.scheduleId}/unpause`, { apiKey: 'admin' });
      expect(unpaused).toMatchObject({ status: 200, body: { paused: false } });
      await untilRuns(paused.scheduleId, 1);

      const pausedAgain = await call('POST', `/schedules/${paused.scheduleId}/pause`, { apiKey: 'admin' });
      expect(pausedAgain).toMatchObject({ status: 200, body: { paused: true } });
      const described = await describeTemporal(paused.scheduleId);
      expect(described.state.paused).toBe(true);
      expect(described.state.note).toBe('Paused through the API by admin admin');
      const taken = described.info.numActionsTaken;
      const besideTaken = (await describeTemporal(beside.scheduleId)).info.numActionsTaken;
      await until(
        async () => (await describeTemporal(beside.scheduleId)).info.numActionsTaken >= besideTaken + 3,
        'three more runs of the schedule beside',
      );
      expect((await describeTemporal(paused.scheduleId)).info.numActionsTaken).toBe(taken);
    } finally {
      await deleteSchedule(paused.scheduleId);
      await deleteSchedule(beside.scheduleId);
    }
  });
});
