import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { useAgentServer, completes, type ReceivedCall, acceptsAndHearsCancel } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { waitForTask, startTask, reportOn } from '../support/tasks';
import { useTemporalClient } from '../support/temporal';
import { testStack } from '../support/test-stack';
import { closedStatus } from '../support/until';

const { EventType, ResetReapplyType } = temporal.api.enums.v1;

/**
 * What an operator's Reset in the Temporal Web UI does to the service's tasks. Cancel and Terminate
 * from the Web UI are covered in cancellation.test.ts ("an operator ... cancelling their workflow",
 * "... terminated").
 */
describe('Reset of a task workflow in the Temporal Web UI', () => {
  const server = useAgentServer();
  const client = useTemporalClient();

  /**
   * The request the Web UI sends for "Reset to first workflow task" on a Temporal server of 1.24 or
   * later, with its options left as they are: signals and updates after that point are applied again
   * to the new run. Resolves with the new run's handle, once that run closed unless `running`.
   */
  async function resetToFirstWorkflowTask(workflowId: string, { running = false } = {}) {
    const { runId } = await client().workflow.getHandle(workflowId).describe();
    const { events } = await client().workflow.getHandle(workflowId, runId).fetchHistory();
    const firstCompleted = events!.find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)!;
    const reset = await client().workflowService.resetWorkflowExecution({
      namespace: testStack().temporalNamespace,
      workflowExecution: { workflowId, runId },
      workflowTaskFinishEventId: firstCompleted.eventId,
      reason: 'operator-actions test',
      requestId: randomUUID(),
      resetReapplyType: ResetReapplyType.RESET_REAPPLY_TYPE_ALL_ELIGIBLE,
    });
    expect(reset.runId).not.toBe(runId);
    const newRun = client().workflow.getHandle(workflowId, reset.runId);
    if (!running) expect(await closedStatus(newRun)).toBe('COMPLETED');
    return newRun;
  }

  const task = (taskId: string) => call('GET', `/tasks/${taskId}`, { apiKey: 'admin' }).then((reply) => reply.body);
  const webhook = (received: ReceivedCall) => ({ id: received.headers['webhook-id'], body: received.body });
  /** A callback receiver's deliveries of one task, in order. */
  const deliveries = (route: string, taskId: string) =>
    server()
      .callsTo(route)
      .filter((received) => received.body?.taskId === taskId)
      .map(webhook);

  it('of a completed task: the new run takes the answer the task store holds without calling the agent, the outcome stands, and both callbacks go out again with the same webhook-ids', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('counted', completes({ text: 'once' })),
      callbackUrl: server().route('agent-hook', () => ({ status: 200, body: {} })),
    });
    const taskId = await startTask({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'x' },
      callbackUrl: server().route('task-hook', () => ({ status: 204 })),
    });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { text: 'once' } });
    // The run closes once its callbacks were delivered.
    expect(await closedStatus(client().workflow.getHandle(`task-${taskId}`))).toBe('COMPLETED');
    const before = await task(taskId);
    const [toTask] = deliveries('task-hook', taskId);
    const [toAgent] = deliveries('agent-hook', taskId);

    await resetToFirstWorkflowTask(`task-${taskId}`);

    expect(
      server()
        .callsTo('counted')
        .filter((received) => received.body?.taskId === taskId),
    ).toHaveLength(1);
    // Not even updatedAt moves: the call found the task ended and wrote nothing.
    expect(await task(taskId)).toEqual(before);
    // The same callbacks again, told apart only by completedAt: a receiver that drops a webhook-id it
    // has seen (Standard Webhooks) takes it once.
    const again = (first: ReturnType<typeof webhook>) => ({
      id: first.id,
      body: { ...first.body, completedAt: expect.any(String) },
    });
    expect(deliveries('task-hook', taskId)).toEqual([toTask, again(toTask)]);
    expect(toTask.id).toBe(`${taskId}-callback-task`);
    expect(deliveries('agent-hook', taskId)).toEqual([toAgent, again(toAgent)]);
    expect(toAgent.id).toBe(`${taskId}-callback-agent`);
  });

  it('of a task cancelled through the API: the cancellation, applied again to the new run, keeps it cancelled; the agent is neither called nor told again; its callback goes out again', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('patient', acceptsAndHearsCancel),
      callbackUrl: server().route('patient-hook', () => ({ status: 200, body: {} })),
    });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' } });
    await waitForTask(taskId, { until: (view) => view.phase === 'awaiting_agent_report' });
    expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
    expect(await closedStatus(client().workflow.getHandle(`task-${taskId}`))).toBe('COMPLETED');
    const before = await task(taskId);
    expect(before).toMatchObject({ status: 'cancelled' });
    const callsBefore = server()
      .callsTo('patient')
      .filter((received) => received.body?.taskId === taskId)
      .map(webhook);
    expect(callsBefore.map((received) => received.id)).toEqual([`${taskId}-1`, `${taskId}-cancel`]);

    await resetToFirstWorkflowTask(`task-${taskId}`);

    // Recorded cancelled once more by the new run: only updatedAt moves.
    expect(await task(taskId)).toEqual({ ...before, updatedAt: expect.any(String) });
    expect(
      server()
        .callsTo('patient')
        .filter((received) => received.body?.taskId === taskId)
        .map(webhook),
    ).toEqual(callsBefore);
    expect(deliveries('patient-hook', taskId).map(({ id, body }) => [id, body.status])).toEqual([
      [`${taskId}-callback-agent`, 'cancelled'],
      [`${taskId}-callback-agent`, 'cancelled'],
    ]);
  });
  it('of a task awaiting its report: the new run carries the task on, calls the agent again as the next attempt, and ends it with the report', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('reports-later', acceptsAndHearsCancel),
    });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' } });
    await waitForTask(taskId, { until: (view) => view.phase === 'awaiting_agent_report' });

    const newRun = await resetToFirstWorkflowTask(`task-${taskId}`, { running: true });
    await waitForTask(taskId, {
      until: () =>
        server()
          .callsTo('reports-later')
          .filter((received) => received.body?.taskId === taskId).length === 2,
    });
    // The run the Reset terminated is not taken for one an operator terminated: the task stays pending.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await task(taskId)).toMatchObject({ status: 'pending', phase: 'awaiting_agent_report', attempts: 2 });
    expect(
      server()
        .callsTo('reports-later')
        .filter((received) => received.body?.taskId === taskId)
        .map((received) => received.headers['webhook-id']),
    ).toEqual([`${taskId}-1`, `${taskId}-2`]);

    expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { late: true } })).status).toBe(200);
    expect(await closedStatus(newRun)).toBe('COMPLETED');
    expect(await task(taskId)).toMatchObject({ status: 'completed', result: { late: true } });
  });

  it('of a task cancelled by cancelling its workflow, which the new run does not hear again: the task stays cancelled and its agent is not called', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('cancelled-by-operator', acceptsAndHearsCancel),
    });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' } });
    await waitForTask(taskId, { until: (view) => view.phase === 'awaiting_agent_report' });
    await client().workflow.getHandle(`task-${taskId}`).cancel();
    expect(await closedStatus(client().workflow.getHandle(`task-${taskId}`))).toBe('CANCELLED');
    const before = await task(taskId);
    expect(before).toMatchObject({ status: 'cancelled' });

    await resetToFirstWorkflowTask(`task-${taskId}`);

    expect(await task(taskId)).toEqual(before);
    expect(
      server()
        .callsTo('cancelled-by-operator')
        .filter((received) => received.body?.taskId === taskId && !received.body?.cancel),
    ).toHaveLength(1);
  });
});
