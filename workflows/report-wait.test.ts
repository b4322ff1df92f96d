// The wait for the agent's report or input (report-wait.ts, input-request.ts) on Temporal's
// time-skipping test server, with fake activities: after a 202, and over a room socket.
import { ROOM_PROCESS_QUEUE, taskIdOf, useTaskWorkflow } from '../test/support/task-workflow';
import { until } from '../test/support/until';
import {
  agentReportSignal,
  agentSocketLostSignal,
  cancelTaskUpdate,
  inputAnsweredSignal,
  inputRequestedSignal,
  TaskErrorCode,
  TaskStatus,
  TaskWait,
} from './task-types';

const HOUR_MS = 60 * 60 * 1000;
const room = { roomId: 'room-1', requestedBy: { type: 'HUMAN', id: 'human-1' } };

describe('the wait for the agent, time skipped', () => {
  const workflow = useTaskWorkflow();
  const report = (taskId: string) => ({ taskId, status: TaskStatus.COMPLETED, result: { done: true } });

  it('completes with the report that arrives after the 202', async () => {
    const handle = await workflow().start();
    const taskId = taskIdOf(handle);
    await workflow().waitingFor(handle, TaskWait.REPORT);

    await handle.signal(agentReportSignal, report(taskId));

    expect(await handle.result()).toEqual({ tasks: [{ taskId, status: TaskStatus.COMPLETED }] });
    expect(workflow().fakes.outcome()).toEqual({ status: TaskStatus.COMPLETED, result: { done: true }, attempts: 1 });
    expect(workflow().fakes.notices).toEqual([]);
  });

  it('fails with AGENT_TIMEOUT when no report comes within the task timeout', async () => {
    const handle = await workflow().start({ timeoutMs: 24 * HOUR_MS });

    await handle.result();

    expect(workflow().fakes.outcome()).toMatchObject({
      status: TaskStatus.FAILED,
      error: { code: TaskErrorCode.AGENT_TIMEOUT },
      attempts: 1,
    });
  });

  it('takes up an input request: input-required until answered, the answer delivered, then the report', async () => {
    const handle = await workflow().start();
    const taskId = taskIdOf(handle);
    await workflow().waitingFor(handle, TaskWait.REPORT);

    await handle.signal(inputRequestedSignal, { taskId, requestId: 'request-1', message: 'Go on?' });
    const asking = await workflow().waitingFor(handle, TaskWait.INPUT);
    await handle.signal(inputAnsweredSignal, { taskId, requestId: 'request-1' });
    await workflow().waitingFor(handle, TaskWait.REPORT);
    await handle.signal(agentReportSignal, report(taskId));

    expect(asking.status).toBe(TaskStatus.INPUT_REQUIRED);
    expect(await handle.result()).toEqual({ tasks: [{ taskId, status: TaskStatus.COMPLETED }] });
    expect(workflow().fakes.inputs).toEqual([{ taskId, agentId: 'agent-1', operation: 'run', requestId: 'request-1' }]);
  });

  it('fails with INPUT_TIMEOUT when the input does not come within the task timeout', async () => {
    const handle = await workflow().start({ timeoutMs: HOUR_MS });
    const taskId = taskIdOf(handle);
    await workflow().waitingFor(handle, TaskWait.REPORT);

    await handle.signal(inputRequestedSignal, { taskId, requestId: 'request-1', message: 'Go on?' });
    await workflow().waitingFor(handle, TaskWait.INPUT);

    expect(await handle.result()).toEqual({ tasks: [{ taskId, status: TaskStatus.FAILED }] });
    expect(workflow().fakes.outcome()).toMatchObject({ error: { code: TaskErrorCode.INPUT_TIMEOUT }, attempts: 1 });
    expect(workflow().fakes.inputs).toEqual([]);
  });

  it('is cancelled while it waits: the update answers cancelled once recorded', async () => {
    const handle = await workflow().start();
    const taskId = taskIdOf(handle);
    await workflow().waitingFor(handle, TaskWait.REPORT);

    expect(await handle.executeUpdate(cancelTaskUpdate, { args: [taskId] })).toBe(TaskStatus.CANCELLED);

    expect(await handle.result()).toEqual({ tasks: [{ taskId, status: TaskStatus.CANCELLED }] });
    expect(workflow().fakes.outcome()).toEqual({ status: TaskStatus.CANCELLED });
  });

  it('is cancelled while it waits for input', async () => {
    const handle = await workflow().start();
    const taskId = taskIdOf(handle);
    await workflow().waitingFor(handle, TaskWait.REPORT);
    await handle.signal(inputRequestedSignal, { taskId, requestId: 'request-1', message: 'Go on?' });
    await workflow().waitingFor(handle, TaskWait.INPUT);

    expect(await handle.executeUpdate(cancelTaskUpdate, { args: [taskId] })).toBe(TaskStatus.CANCELLED);

    expect(await handle.result()).toEqual({ tasks: [{ taskId, status: TaskStatus.CANCELLED }] });
  });

  describe('over a room socket', () => {
    beforeEach(() => {
      workflow().fakes.agentSocket = ROOM_PROCESS_QUEUE;
    });

    it("completes with the agent's answer, without a call, and announces it in the room", async () => {
      const handle = await workflow().start({ room });
      const taskId = taskIdOf(handle);
      await workflow().waitingFor(handle, TaskWait.REPORT);

      await handle.signal(agentReportSignal, report(taskId));

      expect(await handle.result()).toEqual({ tasks: [{ taskId, status: TaskStatus.COMPLETED }] });
      expect(workflow().fakes.frames).toMatchObject([{ taskId, roomId: room.roomId, requestedBy: room.requestedBy }]);
      expect(workflow().fakes.calls).toEqual([]);
      expect(workflow().fakes.updates.map((update) => update.outcome)).toEqual([
        { status: TaskStatus.COMPLETED, result: { done: true }, attempts: 1 },
      ]);
    });

    it('calls the agent over HTTP once its socket closed before it answered', async () => {
      const handle = await workflow().start({ room });
      const taskId = taskIdOf(handle);
      await workflow().waitingFor(handle, TaskWait.REPORT);

      await handle.signal(agentSocketLostSignal, taskId);
      await until(() => workflow().fakes.calls.length > 0, 'the call over HTTP');
      await workflow().waitingFor(handle, TaskWait.REPORT);
      await handle.signal(agentReportSignal, report(taskId));

      expect(await handle.result()).toEqual({ tasks: [{ taskId, status: TaskStatus.COMPLETED }] });
      expect(workflow().fakes.calls).toMatchObject([{ taskId }]);
    });

    it('waits for a report over HTTP, without a call, from an agent that asked for input and lost its socket', async () => {
      const handle = await workflow().start({ room });
      const taskId = taskIdOf(handle);
      await workflow().waitingFor(handle, TaskWait.REPORT);
      await handle.signal(inputRequestedSignal, { taskId, requestId: 'request-1', message: 'Go on?' });
      await workflow().waitingFor(handle, TaskWait.INPUT);
      await handle.signal(inputAnsweredSignal, { taskId, requestId: 'request-1' });
      await workflow().waitingFor(handle, TaskWait.REPORT);

      await handle.signal(agentSocketLostSignal, taskId);
      await workflow().waitingFor(handle, TaskWait.REPORT);
      await handle.signal(agentReportSignal, report(taskId));

      expect(await handle.result()).toEqual({ tasks: [{ taskId, status: TaskStatus.COMPLETED }] });
      expect(workflow().fakes.inputFrames).toEqual([
        { roomId: room.roomId, taskId, agentId: 'agent-1', requestId: 'request-1' },
      ]);
      expect(workflow().fakes.calls).toEqual([]);
      expect(workflow().fakes.updates.map(({ outcome }) => outcome.status)).toEqual([
        TaskStatus.INPUT_REQUIRED,
        TaskStatus.PENDING,
        TaskStatus.COMPLETED,
      ]);
    });
  });
});
