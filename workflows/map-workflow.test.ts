// A composition's map task on Temporal's time-skipping test server: the composition, the map's
// workflow and its chunks' workflows bundled as the worker runs them, with an in-memory task store
// behind plain functions in place of the activities. Each element of the array says how its item's
// agent answers: `{n}` completes with `{n: 2n}`, `fail` refuses, `accept` takes the task to report
// on later (and never does), `delayMs` answers after that long.
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import type { CallAgentInput, CallAgentResult, CancellationNotice } from './activity-contract';
import type { compositionWorkflow } from './composition';
import { substituteItem } from './item-arguments';
import type {
  ChunkEnd,
  CloseChunkInput,
  CloseMapInput,
  MapActivities,
  MapProgress,
  OpenChunkInput,
  OpenMapInput,
} from './map-contract';
import { useTimeSkippingWorker } from '../test/support/time-skipping';
import { plannedTask } from '../test/support/planned-task';
import {
  cancelTaskUpdate,
  ItemFailurePolicy,
  itemTaskId,
  TaskErrorCode,
  TaskStatus,
  workflowIdOfMapChunk,
  type ItemError,
  type PlannedTask,
  type TaskError,
  type TaskOutcome,
  type TaskResult,
} from './task-types';

const TASK_QUEUE = 'map-unit';

interface Element {
  n?: number;
  fail?: true;
  accept?: true;
  delayMs?: number;
}

/** A task as the in-memory store keeps it. */
interface Stored {
  status: TaskStatus;
  params?: Record<string, unknown>;
  result?: TaskResult;
  error?: TaskError;
}

let store = new Map<string, Stored>();
let sources = new Map<string, Element[]>();
let calls: CallAgentInput[] = [];
let notices: CancellationNotice[] = [];
let openedChunks: OpenChunkInput[] = [];
let endedQueued: string[][] = [];
let progress: MapProgress[] = [];
let closed: CloseMapInput[] = [];

const ended = (taskId: string, outcome: Stored) => {
  const task = store.get(taskId);
  if (task === undefined || task.status === TaskStatus.PENDING) store.set(taskId, { ...task, ...outcome });
};

const mapActivities: MapActivities = {
  async openMap({ sourceTaskId }: OpenMapInput) {
    return { total: sources.get(sourceTaskId)!.length, maxItemsPerChunk: 256 };
  },
  async recordMapProgress(input: MapProgress) {
    progress.push(input);
  },
  async openChunk(input: OpenChunkInput) {
    openedChunks.push(input);
    const elements = sources.get(input.sourceTaskId)!;
    for (let index = input.from; index <= input.to; index += 1) {
      const substitution = substituteItem(input.params, elements[index], index);
      store.set(itemTaskId(input.mapTaskId, index), {
        status: TaskStatus.PENDING,
        params: 'params' in substitution ? substitution.params : {},
      });
    }
    return { invalid: [] };
  },
  async endQueued(taskIds: string[]) {
    endedQueued.push(taskIds);
    for (const taskId of taskIds) ended(taskId, { status: TaskStatus.CANCELLED });
  },
  async closeChunk({ mapTaskId, from, to, firstFailure }: CloseChunkInput): Promise<ChunkEnd> {
    const counts = { completed: 0, failed: 0, cancelled: 0 };
    for (let index = from; index <= to; index += 1) {
      const { status } = store.get(itemTaskId(mapTaskId, index))!;
      if (status === TaskStatus.COMPLETED || status === TaskStatus.FAILED || status === TaskStatus.CANCELLED)
        counts[status] += 1;
    }
    return { counts, ...(firstFailure === undefined ? {} : { firstFailure: itemError(mapTaskId, firstFailure) }) };
  },
  /** Joins the items' results in order from the store, as the slices hold them. */
  async closeMap(input: CloseMapInput): Promise<TaskOutcome> {
    closed.push(input);
    const { mapTaskId, counts, end } = input;
    let outcome: TaskOutcome;
    if (end.kind === 'completed') {
      const indices = [...Array(counts.total).keys()];
      const errors = indices
        .filter((index) => store.get(itemTaskId(mapTaskId, index))!.status !== TaskStatus.COMPLETED)
        .map((index) => itemError(mapTaskId, index));
      const results = indices.map((index) => store.get(itemTaskId(mapTaskId, index))!.result ?? null);
      outcome = { status: TaskStatus.COMPLETED, result: { results, ...(errors.length > 0 ? { errors } : {}) } };
    } else {
      outcome = end.kind === 'failed' ? { status: TaskStatus.FAILED, error: end.error } : { status: end.kind };
    }
    ended(mapTaskId, outcome);
    return { status: outcome.status };
  },
};

function itemError(mapTaskId: string, index: number): ItemError {
  const taskId = itemTaskId(mapTaskId, index);
  const { status, error } = store.get(taskId)!;
  return { index, taskId, status, ...(error === undefined ? {} : { error }) };
}

const activities = {
  ...mapActivities,
  async callAgent(input: CallAgentInput): Promise<CallAgentResult> {
    calls.push(input);
    if (!input.paramsFromStore) {
      // The composition's source task: its result holds the array.
      const result = { hits: sources.get(input.taskId) };
      ended(input.taskId, { status: TaskStatus.COMPLETED, result });
      return { kind: 'completed', attempt: 1, recorded: true };
    }
    const element = store.get(input.taskId)!.params!.x as Element;
    if (element.delayMs !== undefined) await sleep(element.delayMs);
    if (element.fail) throw ApplicationFailure.nonRetryable('Agent refused the item', TaskErrorCode.AGENT_REJECTED);
    if (element.accept) return { kind: 'accepted', attempt: 1 };
    ended(input.taskId, { status: TaskStatus.COMPLETED, result: { n: element.n! * 2 } });
    return { kind: 'completed', attempt: 1, recorded: true };
  },
  async recordTask({ taskId }: { taskId: string }, change: Stored): Promise<void> {
    if ('status' in change) ended(taskId, change);
  },
  async notifyCancellation(notice: CancellationNotice): Promise<void> {
    notices.push(notice);
  },
  async deliverCallback(): Promise<void> {},
  async validateParams(input: { params: Record<string, unknown> }) {
    return input.params;
  },
};

let workflowCount = 0;

/** A composition of a source task whose result's `hits` are `elements`, and a map over them. */
function mapOver(elements: Element[], forEach: Partial<NonNullable<PlannedTask['forEach']>> = {}): PlannedTask[] {
  workflowCount += 1;
  const source = plannedTask(`w${workflowCount}-source`, 'source');
  sources.set(source.taskId, elements);
  const map = plannedTask(`w${workflowCount}-map`, 'items', {
    parents: [0],
    params: { x: { source: { item: true } } },
    forEach: {
      source: { taskId: '0', field: 'hits' },
      maxConcurrency: 10,
      onItemFailure: ItemFailurePolicy.FAIL,
      ...forEach,
    },
  });
  return [source, map];
}

const itemsOf = (map: PlannedTask, count: number) =>
  Array.from({ length: count }, (_, index) => store.get(itemTaskId(map.taskId, index)));

describe('a map task, time skipped', () => {
  const environment = useTimeSkippingWorker(TASK_QUEUE, activities);

  beforeEach(() => {
    store = new Map();
    sources = new Map();
    calls = [];
    notices = [];
    openedChunks = [];
    endedQueued = [];
    progress = [];
    closed = [];
  });

  const start = (tasks: PlannedTask[]) =>
    environment().client.workflow.start<typeof compositionWorkflow>('compositionWorkflow', {
      args: [{ compositionId: `c${workflowCount}`, tasks, agentCallTimeoutMs: 30_000 }],
      workflowId: `composition-c${workflowCount}`,
      taskQueue: TASK_QUEUE,
    });
  const run = async (tasks: PlannedTask[]) => (await start(tasks)).result();

  /** Waits until `check` holds, polling the in-memory store the activities write. */
  async function until(check: () => boolean): Promise<void> {
    for (let tries = 0; !check(); tries += 1) {
      if (tries > 500) throw new Error('gave up waiting');
      await sleep(20);
    }
  }

  it('completes a map of no items at once, with no chunk', async () => {
    const [source, map] = mapOver([]);

    const summary = await run([source, map]);

    expect(summary.tasks[1]).toEqual({ taskId: map.taskId, status: TaskStatus.COMPLETED });
    expect(store.get(map.taskId)).toEqual({ status: TaskStatus.COMPLETED, result: { results: [] } });
    expect(openedChunks).toEqual([]);
  });

  it('runs a map of one item with its element as the param, from the record, queued until its call', async () => {
    const [source, map] = mapOver([{ n: 21 }]);

    await run([source, map]);

    expect(store.get(map.taskId)).toEqual({ status: TaskStatus.COMPLETED, result: { results: [{ n: 42 }] } });
    expect(calls[1]).toMatchObject({
      taskId: itemTaskId(map.taskId, 0),
      agentId: 'items',
      params: {},
      paramsFromStore: true,
      setsCallingPhase: true,
      keepsResult: false,
    });
    expect(progress).toEqual([
      { mapTaskId: map.taskId, compositionId: `c${workflowCount}`, counts: expect.objectContaining({ completed: 1 }) },
    ]);
  });

  it('runs 20 items in chunks and lanes, and joins their results in element order when the lanes end out of order', async () => {
    // The first chunk (items 0 to 7) is the slowest: the others end before it.
    const elements = Array.from({ length: 20 }, (_, n) => (n < 8 ? { n, delayMs: 300 } : { n }));
    const [source, map] = mapOver(elements);

    await run([source, map]);

    expect(openedChunks.map(({ from, to }) => [from, to]).sort((a, b) => a[0] - b[0])).toEqual([
      [0, 7],
      [8, 15],
      [16, 19],
    ]);
    expect(store.get(map.taskId)).toEqual({
      status: TaskStatus.COMPLETED,
      result: { results: elements.map(({ n }) => ({ n: n * 2 })) },
    });
    // The first chunk ended last: the counts recorded after each chunk reach 20 only then.
    expect(progress.map(({ counts }) => counts.completed)).toEqual([expect.any(Number), 12, 20]);
    expect(closed[0].end).toEqual({ kind: 'completed', chunkStarts: [0, 8, 16], onItemFailure: 'fail' });
  });

  it('under "continue", completes with null for each failed item and lists the failures by index', async () => {
    const elements = Array.from({ length: 12 }, (_, n) => (n === 3 || n === 9 ? { fail: true as const } : { n }));
    const [source, map] = mapOver(elements, { onItemFailure: ItemFailurePolicy.CONTINUE });

    await run([source, map]);

    const { result } = store.get(map.taskId)!;
    expect(result!.results).toEqual(elements.map((element) => (element.fail ? null : { n: element.n * 2 })));
    expect(result!.errors).toEqual(
      [3, 9].map((index) => ({
        index,
        taskId: itemTaskId(map.taskId, index),
        status: TaskStatus.FAILED,
        error: { code: TaskErrorCode.AGENT_REJECTED, message: 'Agent refused the item' },
      })),
    );
    expect(store.get(map.taskId)!.status).toBe(TaskStatus.COMPLETED);
  });

  it('under "fail", fails at the first failed item, cancels the running items and starts no more', async () => {
    // Two lanes of one: item 0 fails at once while item 8, in the other lane, awaits its report.
    const elements = Array.from({ length: 20 }, (_, n) =>
      n === 0 ? { fail: true as const } : { accept: true as const },
    );
    const [source, map] = mapOver(elements, { maxConcurrency: 2 });

    const summary = await run([source, map]);

    expect(summary.tasks[1].status).toBe(TaskStatus.FAILED);
    expect(store.get(map.taskId)!.error).toEqual({
      code: TaskErrorCode.ITEM_FAILED,
      message: `Item 0 (task ${itemTaskId(map.taskId, 0)}) failed: Agent refused the item`,
      details: {
        index: 0,
        taskId: itemTaskId(map.taskId, 0),
        status: TaskStatus.FAILED,
        error: { code: TaskErrorCode.AGENT_REJECTED, message: 'Agent refused the item' },
      },
    });
    // Only the items of the lanes' first chunks were created, and only their first items called.
    expect(openedChunks.map(({ from }) => from).sort((a, b) => a - b)).toEqual([0, 8]);
    expect(
      calls
        .slice(1)
        .map((call) => call.taskId)
        .sort(),
    ).toEqual([0, 8].map((i) => itemTaskId(map.taskId, i)));
    // The running item was cancelled and its agent told; the queued ones were ended in one write each.
    expect(store.get(itemTaskId(map.taskId, 8))!.status).toBe(TaskStatus.CANCELLED);
    expect(notices).toEqual([{ taskId: itemTaskId(map.taskId, 8), agentId: 'items' }]);
    expect(endedQueued.map((ids) => ids.length).sort()).toEqual([7, 7]);
    expect(itemsOf(map, 16).filter((item) => item!.status === TaskStatus.CANCELLED)).toHaveLength(15);
    expect(store.has(itemTaskId(map.taskId, 16))).toBe(false);
  });

  it('cancels a queued item without calling it and a running one with its notice, and the map goes on', async () => {
    // One lane of one: item 0 awaits its report, so items 1 to 7 wait queued behind it.
    const elements = Array.from({ length: 8 }, (_, n) => (n === 0 ? { accept: true as const } : { n }));
    const [source, map] = mapOver(elements, { maxConcurrency: 1, onItemFailure: ItemFailurePolicy.CONTINUE });
    const handle = await start([source, map]);
    const chunk = environment().client.workflow.getHandle(workflowIdOfMapChunk(map.taskId, 0, 7));
    await until(() => calls.some((call) => call.taskId === itemTaskId(map.taskId, 0)));

    expect(await chunk.executeUpdate(cancelTaskUpdate, { args: [itemTaskId(map.taskId, 2)] })).toBe(
      TaskStatus.CANCELLED,
    );
    expect(await chunk.executeUpdate(cancelTaskUpdate, { args: [itemTaskId(map.taskId, 0)] })).toBe(
      TaskStatus.CANCELLED,
    );
    await handle.result();

    expect(calls.map((call) => call.taskId)).not.toContain(itemTaskId(map.taskId, 2));
    expect(notices).toEqual([{ taskId: itemTaskId(map.taskId, 0), agentId: 'items' }]);
    const { result, status } = store.get(map.taskId)!;
    expect(status).toBe(TaskStatus.COMPLETED);
    expect(result!.results).toEqual([null, { n: 2 }, null, { n: 6 }, { n: 8 }, { n: 10 }, { n: 12 }, { n: 14 }]);
    expect((result!.errors as ItemError[]).map(({ index, status }) => [index, status])).toEqual([
      [0, TaskStatus.CANCELLED],
      [2, TaskStatus.CANCELLED],
    ]);
  });

  it('cancels the whole map: its running and queued items, and the map task, before the update answers', async () => {
    const elements = Array.from({ length: 20 }, () => ({ accept: true as const }));
    const [source, map] = mapOver(elements, { maxConcurrency: 2 });
    const handle = await start([source, map]);
    await until(() => calls.length === 3);

    expect(await handle.executeUpdate(cancelTaskUpdate, { args: [map.taskId] })).toBe(TaskStatus.CANCELLED);

    expect(store.get(map.taskId)!.status).toBe(TaskStatus.CANCELLED);
    expect(closed.map((close) => close.end)).toEqual([{ kind: 'cancelled' }]);
    await handle.result();
    expect(notices.map((notice) => notice.taskId).sort()).toEqual([0, 8].map((i) => itemTaskId(map.taskId, i)));
    expect(itemsOf(map, 16).every((item) => item!.status === TaskStatus.CANCELLED)).toBe(true);
    expect(store.has(itemTaskId(map.taskId, 16))).toBe(false);
  });
});
