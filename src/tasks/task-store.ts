import type { Filter, IndexDescription } from 'mongodb';
import type { Principal } from '../auth/principal';
import { isDuplicateKey, type Store } from '../store/mongo';
import { onlyDuplicateKeys, retryWhileBusy } from '../store/retry-while-busy';
import type { TaskChanges } from './task-changes';
import { TaskEventStore } from '../task-events/event-store';
import { KeyedQueue } from '../store/keyed-queue';
import { errorCodeLabel, type Metrics } from '../ops/metrics';
import { ENDING_EVENTS, logIdOf, TaskEventType, type LoggedEvent, type TaskRef } from '../task-events/task-event';
import {
  isLive,
  TaskStatus,
  type Requester,
  type TaskError,
  type TaskPhase,
  type TaskResult,
} from '../../workflows/task-types';

export const TASKS_COLLECTION = 'tasks';
export const COMPOSITIONS_COLLECTION = 'compositions';
export const REPORTED_OUTCOMES_COLLECTION = 'reported_outcomes';
export const TASK_INPUTS_COLLECTION = 'task_inputs';

/** The answer to one input request: `_id` is `<taskId>:<requestId>`, so a request has one answer everywhere. */
interface TaskInputDocument {
  _id: string;
  /** JSON text: a person's input may hold keys a store refuses. */
  input: string;
  answeredBy: Principal;
  answeredAt: Date;
}

/**
 * A task as MongoDB keeps it for lookups. params, result and error are JSON text: they are the
 * callers' and agents' data, whose keys may contain '.' or start with '$', which a store may refuse as field names
 * (src/store/mongo.ts).
 */
export interface TaskDocument {
  _id: string;
  compositionId?: string;
  /** The task's position in its composition's request (the stored field's name stays `index`). */
  index?: number;
  /** The task this one was delegated from (TaskOrigin). */
  parentTaskId?: string;
  /** The room the task was requested in, and by whom (TaskOrigin). */
  roomId?: string;
  requestedBy?: Requester;
  /** Where the completion callback goes. */
  callbackUrl?: string;
  agentId: string;
  operation: string;
  params: string;
  status: TaskStatus;
  phase?: TaskPhase;
  result?: string;
  error?: string;
  attempts?: number;
  /** Calls to the agent started so far, by any worker (TaskStore.startCall). */
  callsStarted?: number;
  /** Why each failed call to the agent failed, in order. */
  attemptErrors?: AttemptError[];
  /** The agent's last progress report. */
  progress?: number;
  message?: string;
  /** While `input-required`: what the agent asks for, as JSON text of an InputRequest. */
  inputRequest?: string;
  /** How many times the agent asked for input. */
  inputRequests?: number;
  /** The last seq handed out in the task's own event log (a task outside any composition). */
  eventSeq?: number;
  /** The seq of the event that ended the task, in its composition's log. */
  endSeq?: number;
  /** When the agent took the task to report on later (its 202, or the start of its MCP task): the report's wait is measured from it. */
  acceptedAt?: Date;
  /** When the agent last asked for input: the answer's wait is measured from it. */
  inputRequestedAt?: Date;
  createdBy: Principal;
  createdAt: Date;
  updatedAt: Date;
}

/** One failed call to the agent, as `GET /tasks/{taskId}` shows it. */
export interface AttemptError {
  attempt: number;
  code: string;
  message: string;
  /** ISO time of the failure. */
  at: string;
}

/** The first outcome claimed for a task before it ended: an agent's report, or a cancellation. */
interface ReportedOutcomeDocument {
  /** The taskId. */
  _id: string;
  /** SHA-256 of the reported outcome's JSON, or CANCELLATION_CLAIM. */
  digest: string;
  /** The status the task ends with; missing in claims of versions before cancellations claimed too. */
  status?: TaskStatus;
  reportedAt: Date;
}

/** The claim of a cancellation, in place of a report's digest (which is base64, never this). */
export const CANCELLATION_CLAIM = 'cancellation';

/** Another outcome claimed first, which the task ends with. */
export type HeldOutcome = Pick<ReportedOutcomeDocument, 'digest' | 'status'>;

interface CompositionDocument {
  _id: string;
  taskIds: string[];
  /** The last seq handed out in the composition's event log; its tasks' created events hold the first ones. */
  eventSeq?: number;
  createdBy: Principal;
  createdAt: Date;
}

export interface StoredComposition {
  compositionId: string;
  createdBy: Principal;
  createdAt: Date;
  tasks: TaskDocument[];
}

export type NewTask = Pick<
  TaskDocument,
  | '_id'
  | 'agentId'
  | 'operation'
  | 'compositionId'
  | 'index'
  | 'parentTaskId'
  | 'callbackUrl'
  | 'roomId'
  | 'requestedBy'
> & { params: Record<string, unknown>; phase: TaskPhase };

/** What an agent asks a person for (docs/api.md, "Input required"). */
export interface InputRequest {
  requestId: string;
  message: string;
  inputSchema?: Record<string, unknown>;
}

/**
 * A status change recorded by the workflow's activities or the API. A change to an ending status is
 * the task's ending event; any other event it is goes in `event`.
 */
export interface TaskChange {
  status?: TaskStatus;
  phase?: TaskPhase;
  result?: TaskResult;
  error?: TaskError;
  attempts?: number;
  /** Appended to the task's attemptErrors. */
  attemptError?: AttemptError;
  progress?: number;
  message?: string;
  /** Set with the input-required status; removed by any other status. */
  inputRequest?: InputRequest;
  event?: LoggedEvent;
}

/**
 * The writes of this process (API and worker alike) to one counter, in turn: without atomic
 * updates, those that raced would take the same seq, and a read-then-write would miss the other's
 * write (src/store/mongo.ts). A task's document (its own log's counter) under `task:<id>`, a
 * composition's counter under `composition:<id>`, which holds its tasks back only while it counts.
 * Writers in other processes still may race; they then take the seqs above.
 */
const inTurn = new KeyedQueue();
const taskKey = (taskId: string): string => `task:${taskId}`;

/** How many seqs above the one it was given a writer tries. */
const SEQ_TRIES = 20;

/** The log a stored task's events go to. */
export const refOf = (task: Pick<TaskDocument, '_id' | 'compositionId'>): TaskRef => ({
  taskId: task._id,
  ...(task.compositionId === undefined ? {} : { compositionId: task.compositionId }),
});

const isEnding = (status: TaskStatus | undefined): boolean => status !== undefined && !isLive(status);

/** Tasks and compositions in MongoDB: written when they are created, updated on every status change. */
export class TaskStore {
  /** `changes` hears of every update this instance writes; share it with the process's other TaskStores. */
  private readonly events: TaskEventStore;

  constructor(
    private readonly store: Store,
    private readonly changes: TaskChanges,
    private readonly metrics: Metrics,
  ) {
    this.events = new TaskEventStore(store);
  }

  static indexes(): IndexDescription[] {
    return [
      { key: { compositionId: 1 }, name: 'by_composition' },
      { key: { parentTaskId: 1 }, name: 'by_parent_task' },
      // A2A's ListTasks: an agent's tasks, newest first.
      { key: { agentId: 1, createdAt: -1, _id: -1 }, name: 'by_agent_newest' },
    ];
  }

  private get tasks() {
    return this.store.collection<TaskDocument>(TASKS_COLLECTION);
  }

  private get compositions() {
    return this.store.collection<CompositionDocument>(COMPOSITIONS_COLLECTION);
  }

  private get inputs() {
    return this.store.collection<TaskInputDocument>(TASK_INPUTS_COLLECTION);
  }

  private get reportedOutcomes() {
    return this.store.collection<ReportedOutcomeDocument>(REPORTED_OUTCOMES_COLLECTION);
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
    if (!again) this.countCreated(tasks, compositionId !== undefined);
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

  private countCreated(tasks: NewTask[], inComposition: boolean): void {
    const kind = inComposition ? 'composition' : 'task';
    for (const task of tasks) this.metrics.tasks.created.inc({ operation: task.operation, kind });
    if (inComposition) this.metrics.tasks.compositionSize.observe(tasks.length);
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
    await this.write(task, change, { ifNotEnded: isEnding(change.status) });
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
   * count numbers the calls across worker crashes, which Temporal's attempt of a local activity does
   * not: a crashed worker's call starts again elsewhere at attempt 1. The status tells whether an
   * earlier call's answer already ended the task. Waiting lookups are not woken: nothing they show
   * changed. The call's started event is logged by `callStarted`, under the seq reserved here in a
   * task's own log.
   */
  async startCall(taskId: string): Promise<TaskDocument | null> {
    // The task's own counter moves for a task of a composition too, where nothing reads it: one
    // write either way. The seq it reserves on an ended task (a call found answered) stays unused.
    return inTurn.run(taskKey(taskId), () =>
      this.tasks.findOneAndUpdate(
        { _id: taskId },
        { $inc: { callsStarted: 1, eventSeq: 1 } },
        { returnDocument: 'before' },
      ),
    );
  }

  /** Logs the started event of the call `startCall` counted (`before` is what it returned). */
  async callStarted(before: TaskDocument, attempt: number): Promise<void> {
    const task = refOf(before);
    await inTurn.run(taskKey(task.taskId), async () => {
      const seq =
        task.compositionId === undefined
          ? (before.eventSeq ?? 1) + 1
          : await this.nextCompositionSeq(task.compositionId);
      await this.append(task, { type: TaskEventType.STARTED, attempt }, seq);
    });
  }

  /**
   * Claims the outcome with this digest (an agent's report, or CANCELLATION_CLAIM) as the one the
   * task ends with: null when it is the first claimed, or the same again; otherwise the outcome
   * held. The claim is an insert keyed by the taskId, since a conditional update is not atomic
   * on every MongoDB-compatible store: of two concurrent findOneAndUpdate both may see the document
   * as it was before either (src/store/mongo.ts, docs/embedded-stack.md).
   */
  async claimOutcome(taskId: string, digest: string, status: TaskStatus): Promise<HeldOutcome | null> {
    try {
      await retryWhileBusy(
        () => this.reportedOutcomes.insertOne({ _id: taskId, digest, status, reportedAt: new Date() }),
        { duplicatesOnRetryAreOurs: false },
      );
      return null;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
    const held = await this.reportedOutcomes.findOne({ _id: taskId });
    return !held || held.digest === digest
      ? null
      : { digest: held.digest, ...(held.status === undefined ? {} : { status: held.status }) };
  }

  /** Claims the answer to an input request: false when the request already has one. */
  async claimInput(taskId: string, requestId: string, input: unknown, answeredBy: Principal): Promise<boolean> {
    try {
      await retryWhileBusy(
        () =>
          this.inputs.insertOne({
            _id: `${taskId}:${requestId}`,
            input: JSON.stringify(input),
            answeredBy,
            answeredAt: new Date(),
          }),
        { duplicatesOnRetryAreOurs: false },
      );
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  /** The answer claimed for an input request; undefined when it has none. */
  async findInput(taskId: string, requestId: string): Promise<{ input: unknown } | undefined> {
    const answer = await this.inputs.findOne({ _id: `${taskId}:${requestId}` });
    return answer ? { input: JSON.parse(answer.input) as unknown } : undefined;
  }

  /**
   * The input claimed for a request the workflow heard was answered, for its delivery. The answer's
   * signal follows its claim, so a missing one is a read that came too soon: thrown, to be retried.
   */
  async answeredInput(taskId: string, requestId: string): Promise<unknown> {
    const answer = await this.findInput(taskId, requestId);
    if (!answer) throw new Error(`The answer to input request ${requestId} of task ${taskId} is not in the store yet`);
    return answer.input;
  }

  /**
   * Writes the change, with its event under the next seq of the task's log. In a task's own log the
   * counter is the task document's, taken in the same write; in a composition's it is the
   * composition's, taken before an ending write (whose `endSeq` then records it with the end itself,
   * so a reader finds the end even if its event's insert was lost) and after any other.
   */
  private write(task: TaskRef, change: TaskChange, { ifNotEnded }: { ifNotEnded: boolean }): Promise<boolean> {
    const logs = isEnding(change.status) || change.event !== undefined;
    const write = async (): Promise<boolean> => {
      if (ifNotEnded) {
        const current = await this.find(task.taskId);
        if (!current || !isLive(current.status)) return false;
      }
      return this.writeNow(task, change);
    };
    return logs || ifNotEnded ? inTurn.run(taskKey(task.taskId), write) : write();
  }

  private async writeNow(task: TaskRef, change: TaskChange): Promise<boolean> {
    const set: Partial<TaskDocument> = { updatedAt: new Date() };
    if (change.status !== undefined) set.status = change.status;
    if (change.phase !== undefined) set.phase = change.phase;
    if (change.result !== undefined) set.result = JSON.stringify(change.result);
    if (change.error !== undefined) set.error = JSON.stringify(change.error);
    if (change.attempts !== undefined) set.attempts = change.attempts;
    if (change.progress !== undefined) set.progress = change.progress;
    if (change.message !== undefined) set.message = change.message;
    if (change.inputRequest !== undefined) set.inputRequest = JSON.stringify(change.inputRequest);
    if (change.status === TaskStatus.INPUT_REQUIRED) set.inputRequestedAt = set.updatedAt;
    if (change.event?.type === TaskEventType.ACCEPTED) set.acceptedAt = set.updatedAt;
    const ends = isEnding(change.status);
    const ownLog = task.compositionId === undefined;
    const logs = ends || change.event !== undefined;
    if (ends && task.compositionId !== undefined) set.endSeq = await this.nextCompositionSeq(task.compositionId);
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
    this.countWrite(change, written);
    // An ending event is stored without the outcome, which readers take from the task.
    const event = ends ? { type: change.status as TaskEventType } : change.event;
    if (!event) return true;
    const seq =
      task.compositionId === undefined
        ? written.eventSeq!
        : (set.endSeq ?? (await this.nextCompositionSeq(task.compositionId)));
    await this.append(task, event, seq);
    return true;
  }

  /** What a write that ended a task, asked for input or answered it tells the metrics. */
  private countWrite(change: TaskChange, written: TaskDocument): void {
    const { tasks, agent } = this.metrics;
    const now = written.updatedAt.getTime();
    const operation = written.operation;
    if (isEnding(change.status)) {
      const code = errorCodeLabel(change.error);
      tasks.ended.inc({ operation, status: written.status, code, ...agent(written.agentId) });
      if (written.acceptedAt) {
        const outcome = code || written.status;
        tasks.reportWait.observe(
          { operation, outcome, ...agent(written.agentId) },
          (now - written.acceptedAt.getTime()) / 1000,
        );
      }
    } else if (change.status === TaskStatus.INPUT_REQUIRED) {
      tasks.inputRequests.inc({ operation });
    } else if (change.event?.type === TaskEventType.INPUT_RECEIVED && written.inputRequestedAt) {
      tasks.inputWait.observe({ operation }, (now - written.inputRequestedAt.getTime()) / 1000);
    }
  }

  /**
   * The next seq of a composition's log, from its counter (a task's own log takes its seq in the
   * task's write). The whole document comes back: FerretDB's findAndModify takes no projection.
   */
  private async nextCompositionSeq(compositionId: string): Promise<number> {
    const counted = await inTurn.run(`composition:${compositionId}`, () =>
      this.compositions.findOneAndUpdate(
        { _id: compositionId },
        { $inc: { eventSeq: 1 } },
        { returnDocument: 'after' },
      ),
    );
    return counted?.eventSeq ?? 1;
  }

  /**
   * Stores the event under `first`, the seq handed out to this writer, or the one above. The insert is
   * the claim of the seq: one found taken was handed out twice, as an `$inc` lost on a store without
   * atomic updates does, and leaves the counter behind the stored seqs. The writer then takes the
   * seqs above in turn, and moves the counter past the one it stored; an ending event that moved
   * records its seq on the task, where readers look for an end whose event is missing.
   */
  private async append(task: TaskRef, event: LoggedEvent | { type: TaskEventType }, first: number): Promise<void> {
    const logId = logIdOf(task);
    let next = first;
    for (let tries = 1; !(await this.events.insert(logId, next, task.taskId, event)); tries += 1) {
      if (tries === SEQ_TRIES) throw new Error(`No free seq for an event of task ${task.taskId} after ${tries} tries`);
      next += 1;
    }
    if (next !== first) {
      const counter = { $max: { eventSeq: next } };
      if (task.compositionId === undefined) await this.tasks.updateOne({ _id: task.taskId }, counter);
      else await this.compositions.updateOne({ _id: task.compositionId }, counter);
      if (ENDING_EVENTS.has(event.type)) await this.tasks.updateOne({ _id: task.taskId }, { $set: { endSeq: next } });
    }
    this.changes.logged(logId);
  }

  async find(taskId: string): Promise<TaskDocument | null> {
    return this.tasks.findOne({ _id: taskId });
  }

  /**
   * The task as soon as it is no longer pending (it ended, or it waits for input), or as it stands after `waitMs` or once `signal`
   * aborts. Every read goes through `admit`, which may refuse it by throwing (missing, not the
   * caller's). An update written through this process wakes the wait at once with the document it
   * wrote; one written by a worker elsewhere is found by re-reading, less often as the wait goes on.
   */
  async findEnded(
    taskId: string,
    waitMs: number,
    signal: AbortSignal,
    admit: (task: TaskDocument | null) => TaskDocument,
  ): Promise<TaskDocument> {
    const deadline = Date.now() + waitMs;
    const waiting = new AbortController();
    const stopWaiting = () => waiting.abort();
    signal.addEventListener('abort', stopWaiting, { once: true });
    try {
      let task: TaskDocument | undefined;
      const { firstMs, lastMs } = this.changes.rereads;
      for (let rereadMs = firstMs; ; rereadMs = Math.min(2 * rereadMs, lastMs)) {
        const remainingMs = deadline - Date.now();
        // Listening before reading: an update landing between the read and the wait still wakes it.
        const next = this.changes.next(taskId, Math.max(0, Math.min(rereadMs, remainingMs)), waiting.signal);
        task = admit(task ?? (await this.find(taskId)));
        if (task.status !== TaskStatus.PENDING || remainingMs <= 0 || waiting.signal.aborted) return task;
        // Woken by a write in this process: the document it wrote; by the clock: read again.
        task = await next;
      }
    } finally {
      signal.removeEventListener('abort', stopWaiting);
      waiting.abort();
    }
  }

  /**
   * One page of an agent's tasks, newest first, and how many match in all: those `createdBy` made
   * when given, those with one of `statuses` when given, those updated after `updatedAfter`, and
   * those older than `before` (the last task of the page before).
   */
  async listOfAgent(
    agentId: string,
    {
      createdBy,
      statuses,
      updatedAfter,
      before,
      limit,
    }: {
      createdBy?: Principal;
      statuses?: TaskStatus[];
      updatedAfter?: Date;
      before?: { createdAt: Date; taskId: string };
      limit: number;
    },
  ): Promise<{ tasks: TaskDocument[]; total: number }> {
    const filter: Filter<TaskDocument> = {
      agentId,
      ...(createdBy ? { 'createdBy.kind': createdBy.kind, 'createdBy.id': createdBy.id } : {}),
      ...(statuses ? { status: { $in: statuses } } : {}),
      ...(updatedAfter ? { updatedAt: { $gt: updatedAfter } } : {}),
    };
    const page: Filter<TaskDocument> = before
      ? {
          ...filter,
          $or: [{ createdAt: { $lt: before.createdAt } }, { createdAt: before.createdAt, _id: { $lt: before.taskId } }],
        }
      : filter;
    const [tasks, total] = await Promise.all([
      this.tasks.find(page).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray(),
      this.tasks.countDocuments(filter),
    ]);
    return { tasks, total };
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
    const tasks = await this.tasks.find({ compositionId }).toArray();
    tasks.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return { compositionId, createdBy: composition.createdBy, createdAt: composition.createdAt, tasks };
  }
}
