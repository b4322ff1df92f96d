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

/**
 * Draws the details once per activation, after its last change, however many tasks changed in it:
 * the Web UI reads them by a query, which the worker answers between activations only, and a level
 * of a large composition changes many tasks in one. The draw waits for the microtasks queued before
 * it, which the worker runs before it concludes the activation.
 */
export class LiveDetails {
  private drawQueued = false;

  constructor(
    private readonly draw: () => string,
    private readonly show: (markdown: string) => void,
  ) {}

  changed(): void {
    if (this.drawQueued) return;
    this.drawQueued = true;
    void Promise.resolve().then(() => {
      this.drawQueued = false;
      this.show(this.draw());
    });
  }
}
