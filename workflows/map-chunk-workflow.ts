// One chunk of a map: its items, each run as a composition runs a task (task-run.ts), in index
// order, at most its share at once. It creates their records in one write (openChunk), and once
// they all ended joins their results into its slice of the map's result (closeChunk).
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import { mapWork, mapWorkOptions } from './activity-stubs';
import { detailsOf, LiveDetails } from './live-details';
import type { ChunkCounts, ChunkEnd, MapChunkInput } from './map-contract';
import type { RunOfTask } from './running-task';
import { listenToTasks } from './task-messages';
import { TaskRun } from './task-run';
import {
  ItemFailurePolicy,
  itemTaskId,
  TaskStatus,
  type CompositionInput,
  type PlannedTask,
  type TaskStatus as Status,
} from './task-types';

// Not async itself: see compositionWorkflow.
export function mapChunkWorkflow(input: MapChunkInput): Promise<ChunkEnd> {
  const run = new ChunkRun(input);
  listenToTasks(run);
  return run.execute();
}

/** The item at `index` as a task without parents, whose call reads its params from its record. */
function itemPlan(map: PlannedTask, index: number): PlannedTask {
  return {
    taskId: itemTaskId(map.taskId, index),
    agentId: map.agentId,
    agentName: map.agentName,
    operation: map.operation,
    params: {},
    parents: [],
    executeOnParentFailure: false,
    timeoutMs: map.timeoutMs,
    retry: map.retry,
    notifyAgent: map.notifyAgent,
    paramsInStore: true,
  };
}

/** Waits for every promise of `list`, those added meanwhile too. */
async function settle(list: Array<Promise<void>>): Promise<void> {
  for (let settled = 0; settled < list.length;) {
    const pending = list.slice(settled);
    settled = list.length;
    await Promise.all(pending);
  }
}

/** The state of one chunk: its items, which of them started, and what stopped it. */
class ChunkRun implements RunOfTask {
  readonly visibleCalls = true;
  readonly deliveries: Array<Promise<void>> = [];
  readonly input: CompositionInput;
  readonly tasks: TaskRun[];
  private readonly byId: Map<string, TaskRun>;
  private readonly started = new Set<TaskRun>();
  /** Items ended without running: their params failed their check, or they were cancelled while queued. */
  private readonly endedUnrun = new Map<TaskRun, Status>();
  /** The items' records being written: a cancellation waits for them. */
  private opening!: Promise<void>;
  /** The write of the queued items' cancellation, which their cancelTask updates wait for. */
  private unrunRecorded: Promise<void> = Promise.resolve();
  /** Items started by their cancellation rather than by a lane. */
  private readonly cancelledRuns: Array<Promise<void>> = [];
  private readonly root = CancellationScope.current();
  /** The next item no lane took yet. */
  private next = 0;
  /** Under `fail`, the index of the item whose end stopped the chunk. */
  private firstFailure?: number;
  private readonly details = new LiveDetails(() => this.drawDetails(), setCurrentDetails);

  constructor(readonly chunk: MapChunkInput) {
    const { task, from, to, agentCallTimeoutMs } = chunk;
    const items = Array.from({ length: to - from + 1 }, (_, offset) => itemPlan(task, from + offset));
    this.input = { tasks: items, agentCallTimeoutMs };
    this.tasks = items.map((item, position) => new TaskRun(item, position, this, false));
    this.byId = new Map(this.tasks.map((item) => [item.task.taskId, item]));
  }

  taskOf(taskId: string): TaskRun | undefined {
    return this.byId.get(taskId);
  }

  progress() {
    return this.tasks.map((item) => item.progress());
  }

  async execute(): Promise<ChunkEnd> {
    const { mapTaskId, from, to, share } = this.chunk;
    this.opening = this.open();
    await this.opening;
    await Promise.all(Array.from({ length: Math.min(share, this.tasks.length) }, () => this.lane()));
    await settle(this.cancelledRuns);
    await this.endQueued();
    await settle(this.deliveries);
    // A cancelTask update answers once its item is recorded, which may be the last thing of the run.
    if (!allHandlersFinished()) await condition(allHandlersFinished);
    return CancellationScope.nonCancellable(() =>
      mapWork.closeChunk.executeWithOptions({ ...mapWorkOptions, summary: `join items ${from} to ${to}` }, [
        {
          mapTaskId,
          from,
          to,
          ...(this.firstFailure === undefined ? {} : { firstFailure: this.firstFailure }),
        },
      ]),
    );
  }

  /** The items' records, written in one activity; those whose params failed their check ended there. */
  private async open(): Promise<void> {
    const { mapTaskId, task, sourceTaskId, field, from, to } = this.chunk;
    // Not cut short: once it began, its records may exist, and a cancellation then ends them below.
    const { invalid } = await CancellationScope.nonCancellable(() =>
      mapWork.openChunk.executeWithOptions({ ...mapWorkOptions, summary: `create items ${from} to ${to}` }, [
        {
          mapTaskId,
          sourceTaskId,
          field,
          from,
          to,
          agentId: task.agentId,
          operation: task.operation,
          params: task.params,
          workflowId: workflowInfo().workflowId,
        },
      ]),
    );
    for (const index of invalid) {
      const item = this.tasks[index - from];
      this.endedUnrun.set(item, TaskStatus.FAILED);
      this.itemEnded(item, TaskStatus.FAILED);
    }
  }

  /** One lane of the chunk's share: an item at a time, in index order, until none is left or the chunk stops. */
  private async lane(): Promise<void> {
    for (let item = this.nextQueued(); item !== undefined; item = this.nextQueued()) await this.runItem(item);
  }

  private nextQueued(): TaskRun | undefined {
    if (this.firstFailure !== undefined || this.root.consideredCancelled) return undefined;
    while (this.next < this.tasks.length) {
      const item = this.tasks[this.next++];
      if (!this.started.has(item) && !this.endedUnrun.has(item)) return item;
    }
    return undefined;
  }

  private async runItem(item: TaskRun): Promise<void> {
    this.started.add(item);
    await item.live();
    this.itemEnded(item, item.outcome!.status);
  }

  /** Under `fail`, the first item that did not complete stops the chunk: no more start, the running ones are cancelled. */
  private itemEnded(item: TaskRun, status: Status): void {
    this.changed();
    if (status === TaskStatus.COMPLETED || this.chunk.onItemFailure !== ItemFailurePolicy.FAIL) return;
    // A chunk cancelled from outside stops for that, not for its items' cancellations.
    if (this.firstFailure !== undefined || this.root.consideredCancelled) return;
    this.firstFailure = this.chunk.from + item.position;
    for (const running of this.started) if (running.outcome === undefined) void running.cancel();
  }

  /** The items that never started, once the chunk stopped or was cancelled: recorded cancelled in one write. */
  private async endQueued(): Promise<void> {
    const queued = this.tasks.filter((item) => !this.started.has(item) && !this.endedUnrun.has(item));
    if (queued.length === 0) return;
    for (const item of queued) this.endedUnrun.set(item, TaskStatus.CANCELLED);
    this.unrunRecorded = CancellationScope.nonCancellable(() =>
      mapWork.endQueued.executeWithOptions(
        {
          ...mapWorkOptions,
          summary: `cancel ${queued.length} queued items of ${this.chunk.from} to ${this.chunk.to}`,
        },
        [queued.map((item) => item.task.taskId)],
      ),
    );
    this.changed();
    await this.unrunRecorded;
  }

  /**
   * The cancelTask update of an item. A queued one is started in its cancelled scope, where it calls
   * no agent and records its cancellation, as any task cancelled before its call does.
   */
  async cancel(taskId: string): Promise<Status> {
    const item = this.byId.get(taskId)!;
    await this.opening;
    const unrun = this.endedUnrun.get(item);
    if (unrun !== undefined) {
      await this.unrunRecorded;
      return unrun;
    }
    const answer = item.cancel();
    if (!this.started.has(item)) this.cancelledRuns.push(this.runItem(item));
    return answer;
  }

  private counts(): ChunkCounts {
    const counts: ChunkCounts = { completed: 0, failed: 0, cancelled: 0 };
    const count = (status: Status | undefined) => {
      if (status === TaskStatus.COMPLETED || status === TaskStatus.FAILED || status === TaskStatus.CANCELLED)
        counts[status] += 1;
    };
    for (const item of this.started) count(item.outcome?.status);
    for (const status of this.endedUnrun.values()) count(status);
    return counts;
  }

  /** Items call as tasks without parents do: their calls set their calling phase themselves (paramsInStore). */
  callingPhaseInCall(): boolean {
    return false;
  }

  changed(): void {
    this.details.changed();
  }

  /** The run's current details: the chunk's counts and its running items, never every item. */
  private drawDetails(): string {
    const { completed, failed, cancelled } = this.counts();
    const running = [...this.started].filter((item) => item.outcome === undefined).map((item) => item.progress());
    return [
      `**Items ${this.chunk.from} to ${this.chunk.to}**: ${completed} completed, ${failed} failed, ${cancelled} cancelled`,
      '',
      detailsOf(running),
    ].join('\n');
  }
}
