import { randomUUID } from 'node:crypto';
import {
  ScheduleNotFoundError,
  ServiceError,
  isGrpcServiceError,
  type ScheduleOptions,
  type ScheduleUpdateOptions,
} from '@temporalio/client';
import { isAdmin, principalRef, type Principal } from '../auth/principal';
import type { Config } from '../config/config';
import { ApiError, ErrorCode, invalid, notFound } from '../http/errors';
import type { Logger } from '../ops/logger';
import type { TaskLauncher } from '../tasks/task-launcher';
import type { TemporalHandle } from '../tasks/temporal-client';
import { runWorkflowIdPrefixOf, temporalScheduleIdOf, type ScheduledRunInput } from '../../workflows/schedule-contract';
import { readableSchedule } from './schedule-access';
import type { ScheduleChange, ScheduleRequest } from './schedule-request-schema';
import { CATCHUP_WINDOW, checkedSpec, OVERLAP_POLICY, temporalSpecOf } from './schedule-spec';
import type { Schedule, ScheduleRun, ScheduleStore } from './schedule-store';
import { summaryOf } from './schedule-summary';

export interface SchedulesDeps {
  store: ScheduleStore;
  temporal: TemporalHandle;
  launcher: Pick<TaskLauncher, 'check'>;
  config: Pick<Config, 'taskQueue' | 'maxSchedulesPerCreator'>;
  logger: Logger;
}

/** A schedule with what Temporal says of it now. */
export interface DescribedSchedule {
  schedule: Schedule;
  nextRuns: Date[];
  recentRuns: ScheduleRun[];
}

/** gRPC INVALID_ARGUMENT: Temporal refused the spec (a cron field out of range, a zone its database lacks). */
const INVALID_ARGUMENT = 3;

/**
 * Schedules: each a record in the schedule store and a Temporal schedule of the same id, whose runs
 * (workflows/scheduled-run.ts) launch the action as its creator. The action is checked as POST /tasks
 * or POST /tasks/compose check theirs, whenever it is set, and again at each run.
 */
export class Schedules {
  constructor(private readonly deps: SchedulesDeps) {}

  /**
   * The record first, then the Temporal schedule. When Temporal certainly made none the record goes
   * again; when it cannot tell, the record stays, and a lookup that finds no Temporal schedule
   * removes it.
   */
  async create(principal: Principal, request: ScheduleRequest): Promise<Schedule> {
    const spec = checkedSpec(request.spec);
    await this.deps.launcher.check(principal, request.action);
    await this.refuseOverCap(principal);
    const now = new Date();
    const schedule: Schedule = {
      scheduleId: randomUUID(),
      createdBy: principal,
      createdAt: now,
      updatedAt: now,
      ...request,
      spec,
    };
    await this.deps.store.insert(schedule);
    try {
      await this.deps.temporal.client.schedule.create({
        ...this.optionsOf(schedule),
        scheduleId: temporalScheduleIdOf(schedule.scheduleId),
        // Who made it, for an operator reading the Web UI's Schedules page.
        memo: { createdBy: `${principal.kind}:${principal.id}`, scheduleId: schedule.scheduleId },
      });
    } catch (error) {
      // A create whose answer was lost may have made the schedule: then it stands.
      const made = await this.exists(schedule.scheduleId).catch(() => undefined);
      if (made === false) {
        await this.deps.store.remove(schedule.scheduleId).catch(() => undefined);
        throw refusedSpec(error) ?? error;
      }
      if (made === undefined) throw error;
    }
    this.deps.logger.info(
      { scheduleId: schedule.scheduleId, createdBy: principalRef(principal), summary: summaryOf(schedule) },
      'schedule created',
    );
    return schedule;
  }

  /** A page of the caller's schedules; an admin's page holds everyone's. */
  list(principal: Principal, page: { limit: number; after?: string }): Promise<Schedule[]> {
    return this.deps.store.list(isAdmin(principal) ? undefined : principal, page);
  }

  async describe(principal: Principal, scheduleId: string): Promise<DescribedSchedule> {
    const schedule = await this.readable(principal, scheduleId);
    const description = await this.temporalCall(schedule, (handle) => handle.describe());
    return {
      schedule: { ...schedule, paused: description.state.paused },
      nextRuns: description.info.nextActionTimes,
      recentRuns: await this.deps.store.recentRuns(scheduleId),
    };
  }

  /**
   * Changes what the change names; a new action is checked as the creator's, whom the runs act as.
   * Unless the change names `paused`, the schedule stays paused or not as Temporal has it: an operator
   * may have paused it in the Web UI.
   */
  async update(principal: Principal, scheduleId: string, change: ScheduleChange): Promise<Schedule> {
    const current = await this.readable(principal, scheduleId);
    const spec = change.spec ? checkedSpec(change.spec) : current.spec;
    if (change.action) await this.deps.launcher.check(current.createdBy, change.action);
    const changed: Schedule = { ...current, ...change, spec, updatedAt: new Date() };
    try {
      await this.temporalCall(current, (handle) =>
        handle.update((previous) => {
          changed.paused = change.paused ?? previous.state.paused;
          return { ...this.optionsOf(changed), state: { ...previous.state, paused: changed.paused } };
        }),
      );
    } catch (error) {
      throw refusedSpec(error) ?? error;
    }
    await this.deps.store.replace(changed);
    this.deps.logger.info({ scheduleId, by: principalRef(principal), change: Object.keys(change) }, 'schedule changed');
    return changed;
  }

  async setPaused(principal: Principal, scheduleId: string, paused: boolean): Promise<Schedule> {
    const current = await this.readable(principal, scheduleId);
    const note = `${paused ? 'Paused' : 'Unpaused'} through the API by ${principal.kind} ${principal.id}`;
    await this.temporalCall(current, (handle) => (paused ? handle.pause(note) : handle.unpause(note)));
    const changed = { ...current, paused, updatedAt: new Date() };
    await this.deps.store.replace(changed);
    this.deps.logger.info(
      { scheduleId, by: principalRef(principal) },
      paused ? 'schedule paused' : 'schedule unpaused',
    );
    return changed;
  }

  /** A run now, whatever the overlap policy and even while paused: the caller asked for this one. */
  async trigger(principal: Principal, scheduleId: string): Promise<void> {
    const current = await this.readable(principal, scheduleId);
    await this.temporalCall(current, (handle) => handle.trigger('ALLOW_ALL'));
    this.deps.logger.info({ scheduleId, by: principalRef(principal) }, 'schedule triggered');
  }

  /** No run starts after this; runs already started go on with their work. */
  async remove(principal: Principal, scheduleId: string): Promise<void> {
    await this.readable(principal, scheduleId);
    try {
      await this.deps.temporal.client.schedule.getHandle(temporalScheduleIdOf(scheduleId)).delete();
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    }
    await this.deps.store.remove(scheduleId);
    this.deps.logger.info({ scheduleId, by: principalRef(principal) }, 'schedule deleted');
  }

  /**
   * 409 once the caller has MAX_SCHEDULES_PER_CREATOR schedules: each may start a task a second,
   * outside the caller's write rate. Concurrent creations may pass the bound by a few.
   */
  private async refuseOverCap(principal: Principal): Promise<void> {
    if (isAdmin(principal)) return;
    const max = this.deps.config.maxSchedulesPerCreator;
    if ((await this.deps.store.count(principal)) >= max)
      throw new ApiError(
        ErrorCode.CONFLICT,
        `This caller has ${max} schedules, the most MAX_SCHEDULES_PER_CREATOR allows: delete one first`,
      );
  }

  private async readable(principal: Principal, scheduleId: string): Promise<Schedule> {
    return readableSchedule(principal, await this.deps.store.find(scheduleId), scheduleId);
  }

  /** `call` on the schedule's Temporal handle; a schedule Temporal no longer has is forgotten and unknown (404). */
  private async temporalCall<T>(
    schedule: Schedule,
    call: (handle: ReturnType<TemporalHandle['client']['schedule']['getHandle']>) => Promise<T>,
  ): Promise<T> {
    try {
      return await call(this.deps.temporal.client.schedule.getHandle(temporalScheduleIdOf(schedule.scheduleId)));
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
      await this.deps.store.remove(schedule.scheduleId);
      throw notFound(`Schedule ${schedule.scheduleId}`);
    }
  }

  private async exists(scheduleId: string): Promise<boolean> {
    try {
      await this.deps.temporal.client.schedule.getHandle(temporalScheduleIdOf(scheduleId)).describe();
      return true;
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) return false;
      throw error;
    }
  }

  /** The Temporal schedule of `schedule`, but for its id and memo, which are set once. */
  private optionsOf(schedule: Schedule): ScheduleUpdateOptions<ScheduleOptions['action']> {
    const { createdBy } = schedule;
    const input: ScheduledRunInput = {
      scheduleId: schedule.scheduleId,
      owner: {
        kind: createdBy.kind,
        id: createdBy.id,
        ...(createdBy.tenantId ? { tenantId: createdBy.tenantId } : {}),
      },
      action: schedule.action,
    };
    return {
      spec: temporalSpecOf(schedule.spec),
      action: {
        type: 'startWorkflow',
        workflowType: 'scheduledRunWorkflow',
        workflowId: runWorkflowIdPrefixOf(schedule.scheduleId),
        taskQueue: this.deps.config.taskQueue,
        args: [input],
        staticSummary: `Scheduled run: ${summaryOf(schedule)}`,
      },
      policies: { overlap: OVERLAP_POLICY[schedule.overlap], catchupWindow: CATCHUP_WINDOW },
      state: { paused: schedule.paused },
    };
  }
}

/** 400 for a spec Temporal refused; undefined for any other error. */
function refusedSpec(error: unknown) {
  const cause = error instanceof ServiceError ? error.cause : error;
  if (!isGrpcServiceError(cause) || Number(cause.code) !== INVALID_ARGUMENT) return undefined;
  return invalid(`Invalid schedule: Temporal refused its spec: ${cause.details}`, [
    { path: '/spec', message: cause.details },
  ]);
}
