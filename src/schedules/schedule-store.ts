import type { IndexDescription } from 'mongodb';
import type { Principal } from '../auth/principal';
import type { Store } from '../store/mongo';
import { retryWhileBusy } from '../store/retry-while-busy';
import type { LaunchedRun, ScheduledAction } from '../../workflows/schedule-contract';
import type { Overlap, ScheduleSpec } from './schedule-request-schema';

export const SCHEDULES_COLLECTION = 'schedules';
export const SCHEDULE_RUNS_COLLECTION = 'schedule_runs';

/** Runs kept per schedule, newest first: what GET /schedules/{id} shows as recentRuns. */
export const RECENT_RUNS = 10;

/**
 * How long a run's record is kept at least: a launch retried after its worker died looks its run up
 * (activities/launch-scheduled-run.ts), and must find it however many runs came since.
 */
export const RUN_MEMORY_MS = 10 * 60_000;

/** A schedule as the API knows it; Temporal's schedule of the same id runs it. */
export interface Schedule {
  scheduleId: string;
  createdBy: Principal;
  createdAt: Date;
  updatedAt: Date;
  spec: ScheduleSpec;
  action: ScheduledAction;
  overlap: Overlap;
  paused: boolean;
}

/** One run: what it launched, or why it launched nothing. `runId` is the run's workflow id. */
export type ScheduleRun = { runId: string; scheduleId: string; at: Date } & LaunchedRun;

interface ScheduleDocument extends Omit<Schedule, 'scheduleId' | 'action'> {
  _id: string;
  /** As JSON text: task params may hold keys the store refuses (dots, a leading $). */
  action: string;
}

interface RunDocument extends Omit<ScheduleRun, 'runId'> {
  _id: string;
}

/**
 * The schedules' own records, for lists by creator and for the runs' outcomes: Temporal's schedule
 * holds when and what runs, and lists schedules only through its visibility store.
 */
export class ScheduleStore {
  constructor(private readonly store: Store) {}

  static indexes(): IndexDescription[] {
    return [{ key: { 'createdBy.kind': 1, 'createdBy.id': 1, _id: 1 } }];
  }

  static runIndexes(): IndexDescription[] {
    return [{ key: { scheduleId: 1, at: -1 } }];
  }

  private get schedules() {
    return this.store.collection<ScheduleDocument>(SCHEDULES_COLLECTION);
  }

  private get runs() {
    return this.store.collection<RunDocument>(SCHEDULE_RUNS_COLLECTION);
  }

  async insert(schedule: Schedule): Promise<void> {
    await retryWhileBusy(() => this.schedules.insertOne(toDocument(schedule)), { duplicatesOnRetryAreOurs: true });
  }

  /** How many schedules `creator` has. */
  count(creator: Principal): Promise<number> {
    return this.schedules.countDocuments({ 'createdBy.kind': creator.kind, 'createdBy.id': creator.id });
  }

  async find(scheduleId: string): Promise<Schedule | null> {
    const document = await this.schedules.findOne({ _id: scheduleId });
    return document ? fromDocument(document) : null;
  }

  /** A page of the schedules `creator` made (every schedule without one), in the order of their ids. */
  async list(creator: Principal | undefined, { limit, after }: { limit: number; after?: string }): Promise<Schedule[]> {
    const filter = {
      ...(creator ? { 'createdBy.kind': creator.kind, 'createdBy.id': creator.id } : {}),
      ...(after === undefined ? {} : { _id: { $gt: after } }),
    };
    const documents = await this.schedules.find(filter).sort({ _id: 1 }).limit(limit).toArray();
    return documents.map(fromDocument);
  }

  async replace(schedule: Schedule): Promise<void> {
    await retryWhileBusy(() => this.schedules.replaceOne({ _id: schedule.scheduleId }, toDocument(schedule)), {
      duplicatesOnRetryAreOurs: false,
    });
  }

  /** The schedule and its runs. */
  async remove(scheduleId: string): Promise<void> {
    await this.schedules.deleteOne({ _id: scheduleId });
    await this.runs.deleteMany({ scheduleId });
  }

  /**
   * Writes a run (again, when its activity is retried), then forgets the runs older than the
   * RECENT_RUNS newest and than RUN_MEMORY_MS.
   */
  async recordRun({ runId, ...run }: ScheduleRun): Promise<void> {
    await retryWhileBusy(() => this.runs.replaceOne({ _id: runId }, run, { upsert: true }), {
      duplicatesOnRetryAreOurs: true,
    });
    const [oldestKept] = await this.runs
      .find({ scheduleId: run.scheduleId })
      .sort({ at: -1 })
      .skip(RECENT_RUNS - 1)
      .limit(1)
      .toArray();
    if (!oldestKept) return;
    const before = new Date(Math.min(oldestKept.at.getTime(), Date.now() - RUN_MEMORY_MS));
    await this.runs.deleteMany({ scheduleId: run.scheduleId, at: { $lt: before } });
  }

  async findRun(runId: string): Promise<ScheduleRun | null> {
    const document = await this.runs.findOne({ _id: runId });
    return document ? fromRunDocument(document) : null;
  }

  /** The RECENT_RUNS newest runs, newest first. */
  async recentRuns(scheduleId: string): Promise<ScheduleRun[]> {
    const documents = await this.runs.find({ scheduleId }).sort({ at: -1 }).limit(RECENT_RUNS).toArray();
    return documents.map(fromRunDocument);
  }
}

function toDocument({ scheduleId, action, createdBy, ...schedule }: Schedule): ScheduleDocument {
  const owner = {
    kind: createdBy.kind,
    id: createdBy.id,
    ...(createdBy.tenantId ? { tenantId: createdBy.tenantId } : {}),
  };
  return { _id: scheduleId, ...schedule, createdBy: owner, action: JSON.stringify(action) };
}

function fromDocument({ _id, action, ...schedule }: ScheduleDocument): Schedule {
  return { scheduleId: _id, ...schedule, action: JSON.parse(action) as ScheduledAction };
}

function fromRunDocument({ _id, ...run }: RunDocument): ScheduleRun {
  return { runId: _id, ...run } as ScheduleRun;
}
