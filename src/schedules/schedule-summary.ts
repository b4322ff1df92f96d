import type { ScheduledAction } from '../../workflows/schedule-contract';
import type { Schedule } from './schedule-store';
import { describeSpec } from './schedule-spec';

/** Longest summary shown in the Temporal Web UI. */
const SUMMARY_CHARS = 200;

/** What a schedule's runs start, in a line an operator reads on the Web UI's Schedules page. */
export function summaryOf(schedule: Pick<Schedule, 'spec' | 'action'>): string {
  const summary = `${describeSpec(schedule.spec)}: ${describeAction(schedule.action)}`;
  return summary.length > SUMMARY_CHARS ? `${summary.slice(0, SUMMARY_CHARS - 1)}…` : summary;
}

function describeAction(action: ScheduledAction): string {
  if ('task' in action) return `${action.task.operation} on agent ${action.task.agentId}`;
  const operations = action.composition.map((task) => task.operation).join(', ');
  return `composition of ${action.composition.length}: ${operations}`;
}
