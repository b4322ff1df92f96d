// The run's current details (setCurrentDetails): the Web UI shows them under User Metadata, as
// Markdown, while the run is open and after it closed.
import type { TaskProgress } from './task-types';

/** Table cells hold names agents chose: a `|` or a line break would end the cell. */
const cell = (text: string | number | undefined): string =>
  text === undefined
    ? ''
    : String(text)
        .replace(/\|/g, '\\|')
        .replace(/[\r\n]+/g, ' ');

/** A line of counts by status, then one row per task; the long task id last, so the short columns stay readable. */
export function detailsOf(tasks: TaskProgress[]): string {
  const counts = new Map<string, number>();
  for (const task of tasks) counts.set(task.status, (counts.get(task.status) ?? 0) + 1);
  const summary = [...counts].map(([status, count]) => `${count} ${status}`).join(', ');
  const rows = tasks.map(
    (task) =>
      `| ${task.position} | ${cell(task.agentName)} | ${cell(task.operation)} | ${task.status} | ${cell(task.attempts)} | ${cell(task.waitingFor)} | ${cell(task.taskId)} |`,
  );
  return [
    `**Tasks**: ${summary}`,
    '',
    '| # | agent | operation | status | attempts | waiting for | task |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
