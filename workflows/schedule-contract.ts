// The scheduled run workflow's contract with its activities and with the API that creates
// schedules (src/schedules/): what a run takes and answers. Inputs and results are in the histories
// of running workflows: a change here changes what they send and read, so guard it with patched()
// (versions.ts).
import type { TaskRequest } from './task-types';

/** Who a schedule's runs act as: its creator's principal (src/auth/principal.ts has the same shape). */
export interface ScheduleOwner {
  kind: 'admin' | 'service' | 'agent' | 'human';
  id: string;
  tenantId?: string;
}

/** What a schedule starts at each run: a task, as POST /tasks takes it, or a composition, as POST /tasks/compose does. */
export type ScheduledAction = { task: TaskRequest } | { composition: TaskRequest[] };

/** The one argument of every run of a schedule. */
export interface ScheduledRunInput {
  scheduleId: string;
  owner: ScheduleOwner;
  action: ScheduledAction;
}

/** What the launch of one run takes: the run's input and the run's workflow id, the launch's idempotency key. */
export interface ScheduledRunLaunch extends ScheduledRunInput {
  runId: string;
}

/** A run's refusal: the error body POST /tasks or POST /tasks/compose would have answered. */
export interface ScheduledRunError {
  code: string;
  message: string;
}

/** What the launch of a run started, with the workflow that runs it; or why it started nothing. */
export type LaunchedRun =
  | { taskId: string; workflowId: string }
  | { compositionId: string; taskIds: string[]; workflowId: string }
  | { error: ScheduledRunError };

/** What a run that launched its work answers once that work ended. */
export type ScheduledRunResult = Exclude<LaunchedRun, { error: ScheduledRunError }>;

/** The activities of a scheduled run (activities/launch-scheduled-run.ts, activities/await-launched-work.ts). */
export interface ScheduleActivities {
  /**
   * Checks the action as the API checks a request, launches it as the schedule's owner and records
   * the run (also a refused one) for GET /schedules/{id}. Launches once per run, however often retried.
   */
  launchScheduledRun(launch: ScheduledRunLaunch): Promise<LaunchedRun>;
  /** Resolves once the workflow `workflowId` (a task's or a composition's) closed, however it ended. */
  awaitLaunchedWork(workflowId: string): Promise<void>;
}

/** The type of the failure a run ends with when its action no longer passes the checks. */
export const SCHEDULED_RUN_REFUSED = 'ScheduledRunRefused';

/** The Temporal schedule of the API's schedule `scheduleId`. */
export const temporalScheduleIdOf = (scheduleId: string): string => `schedule-${scheduleId}`;

/** The id of a schedule's runs; Temporal appends each run's scheduled time. */
export const runWorkflowIdPrefixOf = (scheduleId: string): string => `scheduled-run-${scheduleId}`;
