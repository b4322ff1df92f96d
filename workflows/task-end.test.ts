// What follows a task's end (task-end.ts): its record, the completion callbacks and the notice to an
// agent that will not be heard, on Temporal's time-skipping test server with fake activities.
import { ApplicationFailure } from '@temporalio/common';
import { taskIdOf, useTaskWorkflow } from '../test/support/task-workflow';
import { cancelTaskUpdate, TaskStatus, TaskWait } from './task-types';

const CALLBACK_URL = 'http://callbacks.test/done';

describe("a task's end, time skipped", () => {
  const workflow = useTaskWorkflow();

  it("records the outcome, then calls back the task's URL and the agent with it", async () => {
    workflow().fakes.answer = () => ({ kind: 'completed', result: { n: 1 }, attempt: 1, recorded: false });
    const handle = await workflow().start({ callbackUrl: CALLBACK_URL, notifyAgent: true });
    const taskId = taskIdOf(handle);

    expect(await handle.result()).toEqual({ tasks: [{ taskId, status: TaskStatus.COMPLETED }] });

    expect(workflow().fakes.outcome()).toEqual({ status: TaskStatus.COMPLETED, result: { n: 1 }, attempts: 1 });
    const body = {
      taskId,
      status: TaskStatus.COMPLETED,
      result: { n: 1 },
      agentId: 'agent-1',
      operation: 'run',
      completedAt: expect.any(String),
    };
    // Delivered side by side, in either order.
    expect(workflow().fakes.callbacks).toHaveLength(2);
    expect(workflow().fakes.callbacks).toEqual(
      expect.arrayContaining([
        { target: { kind: 'task', url: CALLBACK_URL }, callback: body },
        { target: { kind: 'agent', agentId: 'agent-1' }, callback: body },
      ]),
    );
    expect(workflow().fakes.notices).toEqual([]);
  });

  it('leaves the record to a call that recorded its answer, and the callback reads the result from the task store', async () => {
    workflow().fakes.answer = () => ({ kind: 'completed', attempt: 1, recorded: true });
    const handle = await workflow().start({ callbackUrl: CALLBACK_URL });

    await handle.result();

    expect(workflow().fakes.outcome()).toBeUndefined();
    expect(workflow().fakes.callbacks).toEqual([
      {
        target: { kind: 'task', url: CALLBACK_URL },
        callback: expect.not.objectContaining({ result: expect.anything() }),
        outcomeInStore: true,
      },
    ]);
  });

  it('gives a failing callback up after its retries, and the outcome stands', async () => {
    workflow().fakes.answer = () => ({ kind: 'completed', result: { n: 1 }, attempt: 1, recorded: false });
    workflow().fakes.deliver = () => {
      throw ApplicationFailure.retryable('Receiver answered 503');
    };
    const handle = await workflow().start({ callbackUrl: CALLBACK_URL });

    expect(await handle.result()).toEqual({ tasks: [{ taskId: taskIdOf(handle), status: TaskStatus.COMPLETED }] });
    // callbackOptions: twelve attempts.
    expect(workflow().fakes.callbacks).toHaveLength(12);
  });

  it('tells the agent of a cancellation when its report never came, and calls back with cancelled', async () => {
    const handle = await workflow().start({ callbackUrl: CALLBACK_URL });
    const taskId = taskIdOf(handle);
    await workflow().waitingFor(handle, TaskWait.REPORT);

    await handle.executeUpdate(cancelTaskUpdate, { args: [taskId] });

    await handle.result();
    expect(workflow().fakes.notices).toEqual([{ taskId, agentId: 'agent-1' }]);
    expect(workflow().fakes.callbacks.map(({ callback }) => callback.status)).toEqual([TaskStatus.CANCELLED]);
  });

  it('tells the agent nothing of a task that ended at its timeout without a report', async () => {
    const handle = await workflow().start({ timeoutMs: 60_000 });

    await handle.result();

    expect(workflow().fakes.outcome()).toMatchObject({ status: TaskStatus.FAILED });
    expect(workflow().fakes.notices).toEqual([]);
  });
});
