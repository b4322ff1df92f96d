// The child workflow of a map task: reads the array (openMap), runs its items in chunks, each a
// child workflow of its own, in lanes (map-plan.ts), records the map's counts after each chunk, and
// its outcome at the end (closeMap). Its history grows per chunk, never per item.
import { CancellationScope, executeChild, isCancellation, setCurrentDetails } from '@temporalio/workflow';
import { MAP_CHILD_OPTIONS } from './map-children';
import { mapBookkeeping, mapWork, mapWorkOptions, bookkeepingOptions } from './activity-stubs';
import {
  MAP_CHUNK_WORKFLOW,
  type ChunkEnd,
  type MapChunkWorkflow,
  type MapCounts,
  type MapEnd,
  type MapWorkflowInput,
  type OpenedMap,
} from './map-contract';
import { LiveDetails } from './live-details';
import { planMap, type MapChunk, type MapLayout } from './map-plan';
import { activityError } from './outcomes';
import {
  TaskErrorCode,
  TaskStatus,
  workflowIdOfMapChunk,
  type ItemError,
  type ServiceTaskError,
  type TaskError,
  type TaskOutcome,
} from './task-types';

// Not async itself: see compositionWorkflow.
export function mapWorkflow(input: MapWorkflowInput): Promise<TaskOutcome> {
  return new MapWorkflowRun(input).execute();
}

/** An item error's own message, or its JSON. */
function messageOf(error: TaskError | undefined): string {
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string')
    return (error as { message: string }).message;
  return JSON.stringify(error ?? null);
}

/** The map's error under onItemFailure `fail`: its first failed (or cancelled) item. */
export function itemFailed(item: ItemError): ServiceTaskError {
  const what = item.status === TaskStatus.CANCELLED ? 'was cancelled' : `failed: ${messageOf(item.error)}`;
  return {
    code: TaskErrorCode.ITEM_FAILED,
    message: `Item ${item.index} (task ${item.taskId}) ${what}`,
    details: item,
  };
}

/** The state of one map: its counts, its chunks open and ended, and what stopped it early. */
class MapWorkflowRun {
  private readonly counts: MapCounts = { total: 0, completed: 0, failed: 0, cancelled: 0 };
  /** Chunks running, by their first item. */
  private readonly open = new Map<number, MapChunk>();
  /** Chunks ended, by their first item: their slices hold their results. */
  private readonly ended: number[] = [];
  private readonly lanes: CancellationScope[] = [];
  private readonly root = CancellationScope.current();
  private layout?: MapLayout;
  /** The next chunk no lane took yet. */
  private next = 0;
  /** The error that ends the map before its chunks all ran. */
  private stopped?: TaskError;
  private readonly details = new LiveDetails(() => this.drawDetails(), setCurrentDetails);

  constructor(private readonly input: MapWorkflowInput) {}

  private get ref() {
    const { task, compositionId } = this.input;
    return { mapTaskId: task.taskId, ...(compositionId === undefined ? {} : { compositionId }) };
  }

  async execute(): Promise<TaskOutcome> {
    const { task, sourceTaskId } = this.input;
    let opened: OpenedMap | undefined;
    try {
      // Not cut short: a cancellation that comes meanwhile is heard once the map's length is recorded.
      opened = await CancellationScope.nonCancellable(() =>
        mapWork.openMap.executeWithOptions({ ...mapWorkOptions, summary: `read the array of map ${task.taskId}` }, [
          { ...this.ref, sourceTaskId, field: task.forEach.source.field },
        ]),
      );
    } catch (error) {
      this.stopped = activityError(error);
    }
    if (opened !== undefined) {
      this.counts.total = opened.total;
      if (opened.total > 0) await this.runChunks(opened);
    }
    return CancellationScope.nonCancellable(() => this.close());
  }

  private async runChunks({ total, maxItemsPerChunk }: OpenedMap): Promise<void> {
    this.layout = planMap(total, this.input.task.forEach.maxConcurrency, maxItemsPerChunk);
    this.changed();
    await Promise.all(
      this.layout.shares.map((share) => {
        const lane = new CancellationScope();
        this.lanes.push(lane);
        return lane.run(() => this.lane(share));
      }),
    );
  }

  /** One lane: a chunk at a time, the next one no lane took, until none is left or the map stops. */
  private async lane(share: number): Promise<void> {
    const { chunks } = this.layout!;
    while (this.next < chunks.length && this.stopped === undefined && !this.root.consideredCancelled) {
      const chunk = chunks[this.next++];
      this.open.set(chunk.from, chunk);
      this.changed();
      let end: ChunkEnd;
      try {
        end = await this.runChunk(chunk, share);
      } catch (error) {
        this.open.delete(chunk.from);
        this.changed();
        // Cancelled before the chunk's workflow started: it has no items.
        if (isCancellation(error)) return;
        this.stop({
          code: TaskErrorCode.WORKFLOW_ENDED,
          message: `The workflow of items ${chunk.from} to ${chunk.to} ended before them: ${(error as Error).message}`,
        });
        return;
      }
      this.open.delete(chunk.from);
      this.ended.push(chunk.from);
      this.counts.completed += end.counts.completed;
      this.counts.failed += end.counts.failed;
      this.counts.cancelled += end.counts.cancelled;
      this.changed();
      await CancellationScope.nonCancellable(() =>
        mapBookkeeping.recordMapProgress.executeWithOptions(
          { ...bookkeepingOptions, summary: `record the counts of map ${this.input.task.taskId}` },
          [{ ...this.ref, counts: { ...this.counts } }],
        ),
      );
      if (end.firstFailure !== undefined) this.stop(itemFailed(end.firstFailure));
    }
  }

  private runChunk({ from, to }: MapChunk, share: number): Promise<ChunkEnd> {
    const { task, sourceTaskId, agentCallTimeoutMs } = this.input;
    return executeChild<MapChunkWorkflow>(MAP_CHUNK_WORKFLOW, {
      workflowId: workflowIdOfMapChunk(task.taskId, from, to),
      args: [
        {
          mapTaskId: task.taskId,
          task,
          sourceTaskId,
          field: task.forEach.source.field,
          from,
          to,
          share,
          onItemFailure: task.forEach.onItemFailure,
          agentCallTimeoutMs,
        },
      ],
      ...MAP_CHILD_OPTIONS,
      staticSummary: `Items ${from} to ${to} of map ${task.taskId} (${task.agentName}: ${task.operation})`,
    });
  }

  /** The map ends early (onItemFailure `fail`): no lane takes another chunk, and the running ones are cancelled. */
  private stop(error: TaskError): void {
    if (this.stopped !== undefined) return;
    this.stopped = error;
    for (const lane of this.lanes) lane.cancel();
  }

  private close(): Promise<TaskOutcome> {
    const { task, keepsResult } = this.input;
    const end: MapEnd =
      this.stopped !== undefined
        ? { kind: 'failed', error: this.stopped }
        : this.root.consideredCancelled
          ? { kind: 'cancelled' }
          : {
              kind: 'completed',
              chunkStarts: [...this.ended].sort((a, b) => a - b),
              onItemFailure: task.forEach.onItemFailure,
            };
    return mapWork.closeMap.executeWithOptions(
      { ...mapWorkOptions, summary: `record map ${task.taskId} ${end.kind}` },
      [{ ...this.ref, counts: this.counts, end, keepsResult }],
    );
  }

  private changed(): void {
    this.details.changed();
  }

  /** The run's current details: its counts and its open chunks, never its items. */
  private drawDetails(): string {
    const { total, completed, failed, cancelled } = this.counts;
    const rows = [...this.open.values()].map(
      ({ from, to }) => `| ${from} to ${to} | ${workflowIdOfMapChunk(this.input.task.taskId, from, to)} |`,
    );
    return [
      `**Items**: ${completed + failed + cancelled} of ${total} ended (${completed} completed, ${failed} failed, ${cancelled} cancelled); ${this.layout?.chunks.length ?? 0} chunks, ${this.ended.length} ended`,
      '',
      '| items | workflow |',
      '|---|---|',
      ...rows,
    ].join('\n');
  }
}
