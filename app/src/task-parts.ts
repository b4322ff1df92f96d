import { el, jsonText } from './dom';
import type { Task } from './records';
import { temporalRunUrl } from './settings';

/** A task's status as a badge, its class naming the status for the stylesheet. */
export const statusBadge = (status: string): HTMLElement => el('span', { class: `status status-${status}` }, status);

/** A link to a page of the app. */
export const appLink = (route: string, text: string): HTMLAnchorElement => el('a', { href: `#/${route}` }, text);

/** A link to a workflow's run in the Temporal Web UI, when the service knows one. */
export function runLink(workflowId: string): HTMLElement | null {
  const url = temporalRunUrl(workflowId);
  return url === undefined
    ? null
    : el('a', { href: url, target: '_blank', rel: 'noopener noreferrer', class: 'run-link' }, 'Run in Temporal Web UI');
}

/** What a task did: attempts, phase, progress, message, and its result, error or skip reason. */
export function taskDetails(task: Task): HTMLElement {
  return el(
    'dl',
    { class: 'task-details' },
    ...pair('Status', statusBadge(task.status)),
    ...(task.phase ? pair('Phase', task.phase) : []),
    ...pair('Attempts', String(task.attempts ?? 0)),
    ...(task.progress === undefined
      ? []
      : pair('Progress', el('progress', { max: 1, value: task.progress }), ` ${Math.round(task.progress * 100)} %`)),
    ...(task.message ? pair('Message', task.message) : []),
    ...(task.result === undefined ? [] : pair('Result', el('pre', { class: 'result' }, jsonText(task.result)))),
    ...(task.error === undefined ? [] : pair('Error', el('pre', { class: 'error' }, jsonText(task.error)))),
    ...(task.skipReason === undefined ? [] : pair('Skipped', el('pre', {}, jsonText(task.skipReason)))),
  );
}

const pair = (term: string, ...description: Array<Node | string>): HTMLElement[] => [
  el('dt', {}, term),
  el('dd', {}, ...description),
];
