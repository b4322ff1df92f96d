// The poll of a task the agent goes on with on its side (followed-task.ts), an MCP task or an A2A
// task, on Temporal's time-skipping test server with fake activities.
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { CallAgentResult } from './activity-contract';
import { taskIdOf, useTaskWorkflow } from '../test/support/task-workflow';
import { until } from '../test/support/until';
import {
  agentReportSignal,
  cancelTaskUpdate,
  inputAnsweredSignal,
  TaskErrorCode,
  TaskStatus,
  TaskWait,
} from './task-types';

const { EventType } = temporal.api.enums.v1;

const HOUR_MS = 60 * 60 * 1000;
const mcpTask = {
  mcpTaskId: 'mcp-task-1',
  sessionId: 'session-1',
  protocolVersion: '2025-11-25',
  pollIntervalMs: 2_000,
};
const a2aTask = { a2aTaskId: 'a2a-task-1' };

const workflow = useTaskWorkflow();

describe.each([
  {
    kind: 'MCP task',
    wait: TaskWait.MCP_TASK,
    answer: { kind: 'mcpTask', attempt: 1, handle: mcpTask } as CallAgentResult,
    stop: { mcpTask },
  },
  {
    kind: 'A2A task',
    wait: TaskWait.A2A_TASK,
    answer: { kind: 'a2aTask', attempt: 1, handle: a2aTask } as CallAgentResult,
    stop: { a2aTask },
  },
])("the agent's $kind, polled with time skipped", ({ wait, answer, stop }) => {
  beforeEach(() => {
    workflow().fakes.answer = () => answer;
  });

  it('ends completed with the answer its poll recorded, after polls that found it working', async () => {
    workflow().fakes.poll = (nth) =>
      nth < 2 ? { kind: 'working' } : { kind: 'completed', attempt: 1, recorded: true };
    const handle = await workflow().start();

    expect(await handle.result()).toEqual({ tasks: [{ taskId: taskIdOf(handle), status: TaskStatus.COMPLETED }] });
    expect(workflow().fakes.polls).toHaveLength(3);
    expect(workflow().fakes.polls[0]).toMatchObject({
      taskId: taskIdOf(handle),
      attempt: 1,
      handle: Object.values(stop)[0],
    });
    // The poll recorded the outcome: the workflow records nothing more, and tells the agent nothing.
    expect(workflow().fakes.outcome()).toBeUndefined();
    expect(workflow().fakes.notices).toEqual([]);
  });

  it('ends failed with the error of an answer the poll could not record, which the workflow records', async () => {
    const error = { code: 'TOOL_FAILED', message: 'no luck' };
    workflow().fakes.poll = () => ({ kind: 'failed', error, attempt: 1, recorded: false });
    const handle = await workflow().start();

    expect(await handle.result()).toEqual({ tasks: [{ taskId: taskIdOf(handle), status: TaskStatus.FAILED }] });
    expect(workflow().fakes.outcome()).toEqual({ status: TaskStatus.FAILED, error, attempts: 1 });
    expect(workflow().fakes.notices).toEqual([]);
  });

  it('fails with the code of a poll that failed for good, and has the agent cancel its task', async () => {
    workflow().fakes.poll = () => {
      throw ApplicationFailure.nonRetryable('Agent no longer exists', TaskErrorCode.AGENT_NOT_FOUND);
    };
    const handle = await workflow().start();

    await handle.result();

    expect(workflow().fakes.outcome()).toMatchObject({ error: { code: TaskErrorCode.AGENT_NOT_FOUND }, attempts: 1 });
    expect(workflow().fakes.notices).toEqual([{ taskId: taskIdOf(handle), agentId: 'agent-1', ...stop }]);
  });

  it('fails with AGENT_TIMEOUT when it does not end within the task timeout, and has the agent cancel it', async () => {
    const handle = await workflow().start({ timeoutMs: 2 * HOUR_MS });

    await handle.result();

    expect(workflow().fakes.outcome()).toMatchObject({
      status: TaskStatus.FAILED,
      error: { code: TaskErrorCode.AGENT_TIMEOUT },
      attempts: 1,
    });
    // Polls slow down as the task ages: two hours take far fewer than one poll a second.
    expect(workflow().fakes.polls.length).toBeGreaterThan(2);
    expect(workflow().fakes.polls.length).toBeLessThan(600);
    expect(workflow().fakes.notices).toEqual([{ taskId: taskIdOf(handle), agentId: 'agent-1', ...stop }]);
  });

  it('is cancelled while it polls, and has the agent cancel its task', async () => {
    const handle = await workflow().start();
    const taskId = taskIdOf(handle);
    await workflow().waitingFor(handle, wait);

    expect(await handle.executeUpdate(cancelTaskUpdate, { args: [taskId] })).toBe(TaskStatus.CANCELLED);

    expect(await handle.result()).toEqual({ tasks: [{ taskId, status: TaskStatus.CANCELLED }] });
    expect(workflow().fakes.notices).toEqual([{ taskId, agentId: 'agent-1', ...stop }]);
  });

  it("ends with the agent's report that comes while it polls, and has the agent cancel its task", async () => {
    const handle = await workflow().start();
    const taskId = taskIdOf(handle);
    await workflow().waitingFor(handle, wait);

    await handle.signal(agentReportSignal, { taskId, status: TaskStatus.COMPLETED, result: { reported: true } });

    expect(await handle.result()).toEqual({ tasks: [{ taskId, status: TaskStatus.COMPLETED }] });
    expect(workflow().fakes.outcome()).toEqual({
      status: TaskStatus.COMPLETED,
      result: { reported: true },
      attempts: 1,
    });
    expect(workflow().fakes.notices).toEqual([{ taskId, agentId: 'agent-1', ...stop }]);
  });
});

describe('an A2A task whose request for input a person answered, polled with time skipped', () => {
  it('is polled when the answer comes, not at its next scheduled poll, though its agent pushes nothing', async () => {
    workflow().fakes.answer = () => ({ kind: 'a2aTask', attempt: 1, handle: a2aTask });
    const handle = await workflow().start({ timeoutMs: 2 * HOUR_MS });
    const taskId = taskIdOf(handle);
    await workflow().waitingFor(handle, TaskWait.A2A_TASK);
    // Twelve minutes on, the polls are a minute apart; time then goes at its own pace again. Skipped
    // on to just after a poll, whose wait for the next then has its whole minute ahead.
    await workflow().env.sleep(12 * 60_000);
    const polledBefore = workflow().fakes.polls.length + 1;
    while (workflow().fakes.polls.length < polledBefore) await workflow().env.sleep(1_000);
    await until(async () => {
      const types = ((await handle.fetchHistory()).events ?? []).map((event) => event.eventType);
      const lastWait = types.lastIndexOf(EventType.EVENT_TYPE_TIMER_STARTED);
      return lastWait > types.lastIndexOf(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
    }, 'the wait for the next poll');

    // The API stored the answer, then signals: the poll that carries it to the agent comes now.
    await handle.signal(inputAnsweredSignal, { taskId, requestId: 'request-1' });
    await until(() => workflow().fakes.polls.length > polledBefore, 'the poll after the answer');

    const events = (await handle.fetchHistory()).events ?? [];
    const answered = events.findIndex(
      (event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'inputAnswered',
    );
    const sinceAnswer = events.slice(answered + 1);
    const poll = sinceAnswer.findIndex(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'pollA2aTask',
    );
    const timers = sinceAnswer.slice(0, poll).flatMap((event) => {
      if (event.eventType === EventType.EVENT_TYPE_TIMER_FIRED) return ['timer fired'];
      return event.eventType === EventType.EVENT_TYPE_TIMER_CANCELED ? ['timer cancelled'] : [];
    });
    expect(timers).toEqual(['timer cancelled']);
    expect(await handle.executeUpdate(cancelTaskUpdate, { args: [taskId] })).toBe(TaskStatus.CANCELLED);
  });
});
