import pino from 'pino';
import { watchEndedRuns } from './ended-runs';
import type { TaskChange, TaskDocument } from './task-document';
import type { TaskStore } from './task-store';
import type { TemporalHandle } from './temporal-client';
import { TaskStatus } from '../../workflows/task-types';

const task = (id: string, status: TaskStatus) => ({ _id: id, status }) as TaskDocument;

/**
 * Every branch, with a stand-in for the visibility list and the task store, including a run that Failed,
 * which the service's workflow never does on purpose. test/tasks/cancellation.test.ts has real
 * runs that were terminated and that timed out.
 */
describe('watchEndedRuns', () => {
  it('ends the pending tasks of failed and terminated runs (maps and their chunks too), and looks again only from shortly before its last look', async () => {
    const runs = [
      { workflowId: 'task-t1', runId: 'r-t1', status: { name: 'FAILED' } },
      { workflowId: 'composition-c1', runId: 'r-c1', status: { name: 'TERMINATED' } },
      { workflowId: 'composition-c2', runId: 'r-c2', status: { name: 'TERMINATED' } },
      { workflowId: 'task-gone', runId: 'r-gone', status: { name: 'TIMED_OUT' } },
      { workflowId: 'composition-c3', runId: 'r-c3', status: { name: 'TERMINATED' } },
      { workflowId: 'map-m1-items-0-2', runId: 'r-m1-chunk', status: { name: 'TERMINATED' } },
      { workflowId: 'map-m2', runId: 'r-m2', status: { name: 'FAILED' } },
    ];
    // c1 an operator terminated; c2 Temporal itself, over its limits; c3 a Reset, whose new run goes on.
    const terminations: Record<string, { reason: string; identity: string }> = {
      'r-c1': { reason: 'operator test', identity: 'temporal-cli:ops@host' },
      'r-c2': { reason: 'GrpcMessageTooLarge', identity: 'history-service' },
      'r-c3': { reason: 'reset', identity: 'history-resetter' },
      'r-m1-chunk': { reason: 'operator test', identity: 'temporal-cli:ops@host' },
    };
    const latestRuns: Record<string, string> = { 'composition-c3': 'r-c3-after-reset' };
    const queries: string[] = [];
    const temporal = {
      client: {
        options: { namespace: 'default' },
        workflow: {
          async *list({ query }: { query: string }) {
            queries.push(query);
            if (queries.length === 1) yield* runs;
          },
          getHandle: (workflowId: string) => ({
            describe: async () => ({
              runId: latestRuns[workflowId] ?? runs.find((run) => run.workflowId === workflowId)!.runId,
            }),
          }),
        },
        workflowService: {
          getWorkflowExecutionHistoryReverse: async ({ execution }: { execution: { runId: string } }) => ({
            history: { events: [{ workflowExecutionTerminatedEventAttributes: terminations[execution.runId] }] },
          }),
        },
      },
    } as unknown as TemporalHandle;
    const updates: Array<[string, TaskChange]> = [];
    const taskStore = {
      find: async (taskId: string) => (['t1', 'm2'].includes(taskId) ? task(taskId, TaskStatus.PENDING) : null),
      // A map's chunk of three items: one ended, two live.
      findMany: async (taskIds: string[]) =>
        taskIds.map((taskId) => task(taskId, taskId === 'm1.0' ? TaskStatus.COMPLETED : TaskStatus.PENDING)),
      findComposition: async (compositionId: string) => ({
        tasks: [task(`${compositionId}-done`, TaskStatus.COMPLETED), task(`${compositionId}-open`, TaskStatus.PENDING)],
      }),
      updateIfNotEnded: async ({ taskId }: { taskId: string }, change: TaskChange) => {
        updates.push([taskId, change]);
        return true;
      },
    } as unknown as TaskStore;

    const watch = watchEndedRuns({ temporal, taskStore, logger: pino({ level: 'silent' }), intervalMs: 10 });
    for (let tries = 0; tries < 200 && queries.length < 2; tries += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await watch.stop();

    expect(updates).toEqual([
      [
        't1',
        {
          status: TaskStatus.FAILED,
          error: { code: 'WORKFLOW_ENDED', message: "The task's workflow task-t1 ended FAILED before the task ended" },
        },
      ],
      ['c1-open', { status: TaskStatus.CANCELLED }],
      [
        'c2-open',
        {
          status: TaskStatus.FAILED,
          error: {
            code: 'WORKFLOW_ENDED',
            message:
              "The task's workflow composition-c2 was terminated by Temporal (GrpcMessageTooLarge) before the task ended",
          },
        },
      ],
      ['m1.1', { status: TaskStatus.CANCELLED }],
      ['m1.2', { status: TaskStatus.CANCELLED }],
      [
        'm2',
        {
          status: TaskStatus.FAILED,
          error: { code: 'WORKFLOW_ENDED', message: "The task's workflow map-m2 ended FAILED before the task ended" },
        },
      ],
    ]);
    expect(queries[0]).toContain('"mapWorkflow", "mapChunkWorkflow"');
    expect(queries[0]).not.toContain('CloseTime');
    expect(queries[1]).toMatch(/ AND CloseTime >= "\d{4}-\d\d-\d\dT[\d:.]+Z"$/);
  });
});
