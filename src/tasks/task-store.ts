import type { Filter, IndexDescription } from 'mongodb';
import type { Principal } from '../auth/principal';
import type { Metrics } from '../ops/metrics';
import { KeyedQueue } from '../store/keyed-queue';
import type { Store } from '../store/mongo';
import { pageAfter } from '../store/page-after';
import { onlyDuplicateKeys, retryWhileBusy } from '../store/retry-while-busy';
import { LogWriter } from '../task-events/log-writer';
import { TaskEventType, type TaskRef } from '../task-events/task-event';
import { isLive, TaskPhase, TaskStatus } from '../../workflows/task-types';
import type { TaskChanges } from './task-changes';
import {
  COMPOSITIONS_COLLECTION,
  endsTask,
  refOf,
  TASKS_COLLECTION,
  type CompositionDocument,
  type NewItem,
  type NewTask,
  type StoredComposition,
  type TaskChange,
  type TaskDocument,
} from './task-document';
import { countCreated, countWritten } from './task-metrics';

/**
 * The writes of this process to one task's document, in turn: without atomic updates, those that
 * raced would take the same seq of its own log, and a read-then-write would miss the other's write
 * (src/store/mongo.ts). A write holds the task's turn from its read of the status, when it makes one,
 * to the storing of its event. Writers in other processes still may race; they then take the seqs
 * above (LogWriter.append).
 */
const taskTurns = new KeyedQueue();

/**
 * Tasks and compositions in MongoDB: written when they are created, updated on every status change,
 * each change that is an event of the task logged in its event log (LogWriter).
 */
export class TaskStore {
  private readonly log: LogWriter;

  /** `changes` hears of every update this instance writes; share it with the process's other TaskStores. */
  constructor(
    private readonly store: Store,
    private readonly changes: TaskChanges,
    private readonly metrics: Metrics,
  ) {
    this.log = new LogWriter(store, { tasks: TASKS_COLLECTION, compositions: COMPOSITIONS_COLLECTION }, changes.logs);
  }

  static indexes(): IndexDescription[] {
    return [
      { key: { parentTaskId: 1 }, name: 'by_parent_task' },
      // A2A's ListTasks: an agent's tasks, the last updated first.
      { key: { agentId: 1, updatedAt: -1, _id: -1 }, name: 'by_agent_last_update' },
      // A2A's contexts: an agent's tasks in one, newest first.
      { key: { agentId: 1, contextId: 1, createdAt: -1, _id: -1 }, name: 'by_agent_context_newest' },
    ];
  }

  private get tasks() {
    return this.store.collection<TaskDocument>(TASKS_COLLECTION);
  }

  private get compositions() {
    return this.store.collection<CompositionDocument>(COMPOSITIONS_COLLECTION);
  }

  /**
   * With `again`, finishes a create that may have been interrupted (TaskLauncher.finish): the ids
   * are that launch's own, so documents already there are its own and stay as they are.
   */
  async create(
    createdBy: Principal,
    tasks: NewTask[],
    compositionId?: string,
    { again = false }: { again?: boolean } = {},
  ): Promise<void> {
    const now = new Date();
    // The created events are drawn from these documents: seq 1 of a task's own log, or the task's
    // position + 1 in its composition's.
    const documents = tasks.map(({ params, ...task }) => ({
      ...task,
      params: JSON.stringify(params),
      status: TaskStatus.PENDING,
      ...(compositionId === undefined ? { eventSeq: 1 } : {}),
      createdBy,
      createdAt: now,
      updatedAt: now,
    }));
    const existingAreOurs = (write: () => Promise<unknown>) => async (): Promise<unknown> => {
      try {
        return await write();
      } catch (error) {
        if (!again || !onlyDuplicateKeys(error)) throw error;
        return undefined;
      }
    };
    // insertOne for the usual single task: the driver's bulk path behind insertMany costs more CPU.
    const insert = async (): Promise<unknown> =>
      documents.length === 1
        ? this.tasks.insertOne(documents[0])
        : this.tasks.insertMany(documents, { ordered: false });
    await retryWhileBusy(existingAreOurs(insert), { duplicatesOnRetryAreOurs: true });
    // A create finished `again` was counted by the launch that began it.
    if (!again) countCreated(this.metrics, tasks, compositionId !== undefined);
    if (compositionId !== undefined) {
      const composition = {
        _id: compositionId,
        taskIds: tasks.map((task) => task._id),
        eventSeq: tasks.length,
        createdBy,
        createdAt: now,
      };
      await retryWhileBusy(
        existingAreOurs(() => this.compositions.insertOne(composition)),
        { duplicatesOnRetryAreOurs: true },
      );
    }
  }

  /** Undoes `create` when the workflow could not be started. */
  async remove(taskIds: string[], compositionId?: string): Promise<void> {
    await this.tasks.deleteMany({ _id: { $in: taskIds } });
    if (compositionId !== undefined) await this.compositions.deleteOne({ _id: compositionId });
  }

  /**
   * Applies `change` to a task that has not ended, and says whether it had not; an ended task keeps
   * its outcome. For writers that may run after the task ended: an agent's progress report, a TASK
   * frame's delivery to a room (a regular activity, which may outlive its workflow's wait), the API.
   * The task is read, then written, both by `_id`: a filter on the status too would read the whole
   * collection on FerretDB (src/store/mongo.ts), where a conditional update is no more atomic than this.
   */
  updateIfNotEnded(task: TaskRef, change: TaskChange): Promise<boolean> {
    return this.write(task, change, { ifNotEnded: true });
  }

  /**
   * Applies a change the task's workflow decided, or what a call attempt records on the workflow's
   * behalf (its retries, the agent's answer). The workflow decides nothing while a call attempt
   * runs, so these records follow one another and need no condition on the status; and a write by
   * `_id` only is the one every store serves from an index (src/store/mongo.ts). A change that ends
   * the task is the exception: it applies to a task not yet ended, so that a repeated record (a
   * retried activity) neither ends it twice nor logs its end twice.
   */
  async updateUnconditionally(task: TaskRef, change: TaskChange): Promise<void> {
    await this.write(task, change, { ifNotEnded: endsTask(change) });
  }

  /**
   * The agent's answer to a call, as the task's outcome, without reading the task first: the call
   * found it not ended when it counted itself (startCall), or the poll of its MCP task when it began,
   * and nothing but the call ends a task while it runs (a report or a cancellation abandons the
   * call before it records).
   */
  async recordCallAnswer(task: TaskRef, change: TaskChange): Promise<void> {
    await this.write(task, change, { ifNotEnded: false });
  }

  /**
   * Counts a call to the task's agent about to start, and returns the task as it stood before. The
   * count numbers the calls where Temporal's attempt starts again at 1: the call of a run a Reset
   * started, and the local-activity call of a run started before VISIBLE_AGENT_CALLS once its worker
   * crashed (workflows/versions.ts). The status tells whether an earlier call's answer already
   * ended the task. Waiting lookups are not woken: nothing they show changed. The call's started
   * event is logged by `callStarted`, under the seq reserved here in a task's own log. With
   * `callingPhase`, the same write moves the task to calling_agent.
   */
  async startCall(
    taskId: string,
    { callingPhase = false }: { callingPhase?: boolean } = {},
  ): Promise<TaskDocument | null> {
    // The task's own counter moves for a task of a composition too, where nothing reads it: one
    // write either way. The seq it reserves on an ended task (a call found answered) stays unused.
    return taskTurns.run(taskId, async () => {
      const before = await this.tasks.findOneAndUpdate(
        { _id: taskId },
        {
          $inc: { callsStarted: 1, eventSeq: 1 },
          ...(callingPhase ? { $set: { phase: TaskPhase.CALLING_AGENT, updatedAt: new Date() } } : {}),
        },
        { returnDocument: 'before' },
      );
      // Found ended (a call retried after its answer was recorded): an ended task has no phase. A
      // filter on the status would spare this write, but reads the whole collection on FerretDB.
      if (callingPhase && before && !isLive(before.status))
        await this.tasks.updateOne({ _id: taskId }, { $unset: { phase: '' } });
      return before;
    });
  }

  /** Logs the started event of the call `startCall` counted (`before` is what it returned). */
  async callStarted(before: TaskDocument, attempt: number): Promise<void> {
    const task = refOf(before);
    await taskTurns.run(task.taskId, async () => {
      const seq =
        task.compositionId === undefined
          ? (before.eventSeq ?? 1) + 1
          : await this.log.nextCompositionSeq(task.compositionId);
      await this.log.append(task, { type: TaskEventType.STARTED, attempt }, seq);
    });
  }

  /**
   * Writes the change, with its event under the next seq of the task's log. In a task's own log the
   * counter is the task document's, taken in the same write; in a composition's it is the
   * composition's, taken before an ending write (whose `endSeq` then records it with the end itself,
   * so a reader finds the end even if its event's insert was lost) and after any other.
   */
  private write(task: TaskRef, change: TaskChange, { ifNotEnded }: { ifNotEnded: boolean }): Promise<boolean> {
    const logs = endsTask(change) || change.event !== undefined;
    const write = async (): Promise<boolean> => {
      if (ifNotEnded) {
        const current = await this.find(task.taskId);
        if (!current || !isLive(current.status)) return false;
      }
      return this.writeNow(task, change);
    };
    return logs || ifNotEnded ? taskTurns.run(task.taskId, write) : write();
  }

  private async writeNow(task: TaskRef, change: TaskChange): Promise<boolean> {
    const set: Partial<TaskDocument> = { updatedAt: new Date() };
    if (change.status !== undefined) set.status = change.status;
    if (change.phase !== undefined) set.phase = change.phase;
    if (change.result !== undefined) set.result = JSON.stringify(change.result);
    if (change.resultText !== undefined) set.result = change.resultText;
    if (change.map !== undefined) set.map = change.map;
    if (change.error !== undefined) set.error = JSON.stringify(change.error);
    if (change.skipReason !== undefined) set.skipReason = JSON.stringify(change.skipReason);
    if (change.attempts !== undefined) set.attempts = change.attempts;
    if (change.progress !== undefined) set.progress = change.progress;
    if (change.message !== undefined) set.message = change.message;
    if (change.inputRequest !== undefined) set.inputRequest = JSON.stringify(change.inputRequest);
    if (change.status === TaskStatus.INPUT_REQUIRED) set.inputRequestedAt = set.updatedAt;
    if (change.event?.type === TaskEventType.ACCEPTED) set.acceptedAt = set.updatedAt;
    const ends = endsTask(change);
    const ownLog = task.compositionId === undefined;
    const logs = ends || change.event !== undefined;
    if (ends && task.compositionId !== undefined) set.endSeq = await this.log.nextCompositionSeq(task.compositionId);
    const unset = {
      ...(ends || change.status === TaskStatus.INPUT_REQUIRED ? { phase: '' as const } : {}),
      ...(change.status !== undefined && change.status !== TaskStatus.INPUT_REQUIRED
        ? { inputRequest: '' as const }
        : {}),
    };
    const inc = {
      ...(logs && ownLog ? { eventSeq: 1 } : {}),
      ...(change.status === TaskStatus.INPUT_REQUIRED ? { inputRequests: 1 } : {}),
    };
    const written = await this.tasks.findOneAndUpdate(
      { _id: task.taskId },
      {
        $set: set,
        ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}),
        ...(Object.keys(inc).length > 0 ? { $inc: inc } : {}),
        ...(change.attemptError === undefined ? {} : { $push: { attemptErrors: change.attemptError } }),
      },
      { returnDocument: 'after' },
    );
    if (!written) return false;
    // Waiting lookups take the document from here rather than reading it again.
    this.changes.changed(written);
    countWritten(this.metrics, change, written);
    // An ending event is stored without the outcome, which readers take from the task.
    const event = ends ? { type: change.status as TaskEventType } : change.event;
    if (!event) return true;
    const seq =
      task.compositionId === undefined
        ? written.eventSeq!
        : (set.endSeq ?? (await this.log.nextCompositionSeq(task.compositionId)));
    await this.log.append(task, event, seq, written);
    return true;
  }

  async find(taskId: string): Promise<TaskDocument | null> {
    return this.tasks.findOne({ _id: taskId });
  }

  /**
   * The tasks among `taskIds`, in their order. One `findOne` by `_id` each, in parallel: `_id`
   * equality is served by an index everywhere, `$in` may read the whole collection (src/store/mongo.ts).
   */
  async findMany(taskIds: string[]): Promise<TaskDocument[]> {
    const found = await Promise.all(taskIds.map((taskId) => this.tasks.findOne({ _id: taskId })));
    return found.flatMap((task) => (task ? [task] : []));
  }

  /** When the task last changed, without its params and result: whether a copy of its result is current. */
  async findUpdatedAt(taskId: string): Promise<Date | null> {
    const task = await this.tasks.findOne({ _id: taskId }, { projection: { updatedAt: 1 } });
    return task?.updatedAt ?? null;
  }

  /**
   * Creates a map chunk's items in one write: each with its own event log, whose created event
   * (seq 1) is drawn from the document as TaskStore.create's are; an item whose params failed their
   * check is created failed, its ending event at seq 2. Items already there are a retried
   * activity's own and stay as they are.
   */
  async createItems(items: NewItem[]): Promise<void> {
    const now = new Date();
    const documents: TaskDocument[] = items.map(({ params, error, ...item }) => ({
      ...item,
      params: JSON.stringify(params),
      ...(error === undefined
        ? { status: TaskStatus.PENDING, phase: TaskPhase.QUEUED, eventSeq: 1 }
        : { status: TaskStatus.FAILED, error: JSON.stringify(error), eventSeq: 2 }),
      createdAt: now,
      updatedAt: now,
    }));
    const inserted = await retryWhileBusy(
      async () => {
        try {
          await this.tasks.insertMany(documents, { ordered: false });
          return true;
        } catch (error) {
          if (!onlyDuplicateKeys(error)) throw error;
          return false;
        }
      },
      { duplicatesOnRetryAreOurs: true },
    );
    // Found there already: counted by the attempt that wrote them.
    if (inserted) countCreated(this.metrics, items, false, 'item');
    for (const failed of documents.filter((document) => document.status === TaskStatus.FAILED))
      await this.log.appendOnce(refOf(failed), { type: TaskEventType.FAILED }, 2, failed);
  }

  /**
   * Ends the map's items that never started (their chunk stopped or was cancelled) `cancelled`, in
   * one write, with their ending events. Items found ended already keep their outcome.
   */
  async endQueued(taskIds: string[]): Promise<void> {
    const live = (await this.findMany(taskIds)).filter((task) => isLive(task.status)).map((task) => task._id);
    if (live.length === 0) return;
    const update = {
      $set: { status: TaskStatus.CANCELLED, updatedAt: new Date() },
      $unset: { phase: '' as const },
      $inc: { eventSeq: 1 },
    };
    // One request of updates by `_id`: an `$in` filter may read the whole collection (src/store/mongo.ts).
    await this.tasks.bulkWrite(
      live.map((taskId) => ({ updateOne: { filter: { _id: taskId }, update } })),
      { ordered: false },
    );
    for (const ended of await this.findMany(live)) {
      this.changes.changed(ended);
      await this.log.appendOnce(refOf(ended), { type: TaskEventType.CANCELLED }, ended.eventSeq ?? 2, ended);
    }
  }

  /**
   * One page of an agent's tasks, the last updated first (A2A's order), and how many match in all: those `createdBy` made
   * when given, those in the A2A context `contextId` when given, those with one of `statuses` when
   * given, those updated after `updatedAfter`, and those updated before `before` (the last task of the page before).
   */
  async listOfAgent(
    agentId: string,
    {
      createdBy,
      contextId,
      statuses,
      updatedAfter,
      before,
      limit,
    }: {
      createdBy?: Principal;
      contextId?: string;
      statuses?: TaskStatus[];
      updatedAfter?: Date;
      before?: { updatedAt: Date; taskId: string };
      limit: number;
    },
  ): Promise<{ tasks: TaskDocument[]; total: number }> {
    const filter: Filter<TaskDocument> = {
      agentId,
      ...(createdBy ? { 'createdBy.kind': createdBy.kind, 'createdBy.id': createdBy.id } : {}),
      ...(contextId === undefined ? {} : inContext(contextId)),
      ...(statuses ? { status: { $in: statuses } } : {}),
      ...(updatedAfter ? { updatedAt: { $gt: updatedAfter } } : {}),
    };
    const page = pageAfter(filter, 'updatedAt', before && { value: before.updatedAt, id: before.taskId });
    const [tasks, total] = await Promise.all([
      this.tasks.find(page).sort({ updatedAt: -1, _id: -1 }).limit(limit).toArray(),
      this.tasks.countDocuments(filter),
    ]);
    return { tasks, total };
  }

  /** The newest task of `agentId` that `createdBy` sent in the A2A context `contextId`. */
  async findLastInContext(agentId: string, contextId: string, createdBy: Principal): Promise<TaskDocument | null> {
    const [last] = await this.tasks
      .find({ agentId, 'createdBy.kind': createdBy.kind, 'createdBy.id': createdBy.id, ...inContext(contextId) })
      .sort({ createdAt: -1, _id: -1 })
      .limit(1)
      .toArray();
    return last ?? null;
  }

  /** The tasks delegated from any of `parentTaskIds`. */
  async findDelegated(parentTaskIds: string[]): Promise<TaskDocument[]> {
    return this.tasks.find({ parentTaskId: { $in: parentTaskIds } }).toArray();
  }

  /** The composition's tasks, in order, and the last seq of its event log: one read by `_id`. */
  async findCompositionLog(compositionId: string): Promise<{ taskIds: string[]; eventSeq: number } | null> {
    const composition = await this.compositions.findOne(
      { _id: compositionId },
      { projection: { taskIds: 1, eventSeq: 1 } },
    );
    return (
      composition && { taskIds: composition.taskIds, eventSeq: composition.eventSeq ?? composition.taskIds.length }
    );
  }

  async findComposition(compositionId: string): Promise<StoredComposition | null> {
    const composition = await this.compositions.findOne({ _id: compositionId });
    if (!composition) return null;
    // By `_id`: a filter on compositionId reads the whole collection on some stores (src/store/mongo.ts).
    const tasks = await this.findMany(composition.taskIds);
    return { compositionId, createdBy: composition.createdBy, createdAt: composition.createdAt, tasks };
  }
}

/** The tasks of an A2A context: those sent in it, and the task whose id names it when that one was sent in none. */
function inContext(contextId: string): Filter<TaskDocument> {
  return { $or: [{ contextId }, { _id: contextId, contextId: { $exists: false } }] };
}
