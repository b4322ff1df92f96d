import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { TaskChange } from '../../src/tasks/task-document';
import { agentReportSignal, TaskStatus, type CompositionInput } from '../../workflows/task-types';
import { plannedTask } from '../support/planned-task';
import { testStack } from '../support/test-stack';
import { closedStatus, until } from '../support/until';
import { gate } from '../support/gate';

const { EventType } = temporal.api.enums.v1;

Runtime.install({ logger: new DefaultLogger('WARN') });

/**
 * The composition workflow on a real worker, with stand-in activities so that an operator's cancel
 * can be made to arrive while a task's end is being recorded: the record must still land, or the
 * task would stay pending in the task store for good.
 */
describe('an operator cancelling a workflow while it records a task', () => {
  it('lets the record finish, then ends the workflow Canceled', async () => {
    const stack = testStack();
    const taskQueue = `cancel-race-${randomUUID()}`;
    const taskId = randomUUID();
    const recordsStarted: TaskChange[] = [];
    const recordsFinished: TaskChange[] = [];
    const recordMayFinish = gate();
    const activities = {
      callAgent: async () => ({ kind: 'accepted', attempt: 1 }),
      recordTask: async (_taskId: string, change: TaskChange) => {
        recordsStarted.push(change);
        // Past the workflow task's renewal (80 % of 2 s), which is when the cancel comes in; a
        // record the workflow let be cancelled ends here, unfinished.
        await Promise.race([recordMayFinish.opened, Context.current().cancelled]);
        recordsFinished.push(change);
      },
    };
    const input: CompositionInput = {
      agentCallTimeoutMs: 5_000,
      tasks: [plannedTask(taskId, 'agent', { agentName: 'Slow recorder', operation: 'tools/echo' })],
    };

    const workerConnection = await NativeConnection.connect({ address: stack.temporalAddress });
    const connection = await Connection.connect({ address: stack.temporalAddress });
    try {
      const worker = await Worker.create({
        connection: workerConnection,
        namespace: stack.temporalNamespace,
        taskQueue,
        workflowsPath: require.resolve('../../workflows'),
        activities,
      });
      await worker.runUntil(async () => {
        const client = new Client({ connection, namespace: stack.temporalNamespace });
        const workflow = await client.workflow.start('compositionWorkflow', {
          taskQueue,
          workflowId: `task-${taskId}`,
          args: [input],
          workflowTaskTimeout: '2 seconds',
        });
        await workflow.signal(agentReportSignal, { taskId, status: TaskStatus.COMPLETED, result: { done: true } });
        await until(() => recordsStarted.length > 0, 'the record of the task started');
        await workflow.cancel();
        await until(async () => {
          const events = (await workflow.fetchHistory()).events ?? [];
          const requested = events.findIndex(
            (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED,
          );
          return (
            requested >= 0 &&
            events.slice(requested).some((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED)
          );
        }, 'a renewed workflow task that brings the cancel while the record runs');
        recordMayFinish.open();
        expect(await closedStatus(workflow)).toBe('CANCELLED');
      });
    } finally {
      await connection.close();
      await workerConnection.close();
    }
    // The report may come before or after the call's answer, so the outcome may or may not name its attempts.
    expect(recordsFinished).toEqual([
      expect.objectContaining({ status: TaskStatus.COMPLETED, result: { done: true } }),
    ]);
  });
});
