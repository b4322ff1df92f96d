import { api, failureText } from '../api';
import { el, fill, type Page } from '../dom';
import { followEvents } from '../event-stream';
import { compositionGraph } from '../composition-graph';
import { FINAL_STATUSES, type Composition, type TaskEvent } from '../records';
import { runLink, statusBadge } from '../task-parts';
import { eventItem } from './task';

/** A composition, live from its event stream: its graph read again after each event, and the log below. */
export function compositionPage(compositionId: string): Page {
  const path = `/compositions/${encodeURIComponent(compositionId)}`;
  const head = el('div', { class: 'task-head' });
  const graph = el('div', { class: 'graph-frame' });
  const events = el('ol', { class: 'events' });
  const problem = el('p', { class: 'problem', role: 'alert' });
  let composition: Composition | undefined;
  let stream: AbortController | undefined;
  let reading: Promise<void> | undefined;
  let again = false;

  const show = (current: Composition) => {
    composition = current;
    fill(
      head,
      el('h1', {}, 'Composition ', statusBadge(current.status)),
      el('p', { class: 'meta' }, `${current.compositionId} · ${current.tasks.length} tasks`),
      runLink(`composition-${current.compositionId}`),
    );
    fill(graph, compositionGraph(current.tasks));
  };
  // One read at a time, and one more after it when events came meanwhile.
  const refresh = (): void => {
    if (reading) {
      again = true;
      return;
    }
    reading = api<Composition>('GET', path)
      .then(show, (error: unknown) => void (problem.textContent = failureText(error)))
      .finally(() => {
        reading = undefined;
        if (again) {
          again = false;
          refresh();
        }
      });
  };
  const ended = new Set<string>();

  void api<Composition>('GET', path).then(
    (first) => {
      show(first);
      stream = followEvents(
        `${path}/events`,
        (data) => {
          const event = data as TaskEvent;
          if (FINAL_STATUSES.has(event.type)) ended.add(event.taskId);
          events.append(eventItem(event));
          refresh();
        },
        () => composition !== undefined && ended.size >= composition.tasks.length,
        (message) => (problem.textContent = message),
      );
    },
    (error: unknown) => (problem.textContent = failureText(error)),
  );
  return {
    view: el('section', { class: 'composition' }, head, problem, graph, el('h2', {}, 'Events'), events),
    leave: () => stream?.abort(),
  };
}
