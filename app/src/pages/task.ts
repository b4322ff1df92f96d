import { api, failureText } from '../api';
import { el, fill, jsonText, type Page } from '../dom';
import { followEvents } from '../event-stream';
import { inputRequestForm } from '../input-form';
import { FINAL_STATUSES, type Task, type TaskEvent } from '../records';
import { appLink, runLink, taskDetails } from '../task-parts';

/**
 * One task, live: its record, then its event log followed over SSE; each event reads the record
 * again, so the page shows what GET /tasks/{taskId} says, and the log below lists every event.
 */
export function taskPage(taskId: string): Page {
  const path = `/tasks/${encodeURIComponent(taskId)}`;
  const head = el('div', { class: 'task-head' });
  const details = el('div');
  const input = el('div');
  const events = el('ol', { class: 'events' });
  const problem = el('p', { class: 'problem', role: 'alert' });
  let task: Task | undefined;
  let shownRequest: string | undefined;
  let stream: AbortController | undefined;

  const show = (current: Task) => {
    task = current;
    fill(
      head,
      el('h1', {}, current.operation),
      el('p', { class: 'meta' }, `${current.taskId} on agent ${current.agentId}`),
      current.compositionId
        ? el('p', {}, 'Part of ', appLink(`compositions/${current.compositionId}`, 'its composition'))
        : null,
      current.roomId
        ? el('p', {}, 'Asked in ', appLink(`rooms/${encodeURIComponent(current.roomId)}`, 'its room'))
        : null,
      runLink(current.compositionId ? `composition-${current.compositionId}` : `task-${current.taskId}`),
    );
    fill(details, taskDetails(current));
    const request = current.status === 'input-required' ? current.inputRequest : undefined;
    if (request?.requestId !== shownRequest) {
      shownRequest = request?.requestId;
      const answer = (value: Record<string, unknown>) =>
        api('POST', `${path}/input`, { input: value, requestId: request?.requestId });
      fill(input, request ? inputRequestForm(request, answer) : null);
    }
  };
  const refresh = () =>
    api<Task>('GET', path).then(show, (error: unknown) => (problem.textContent = failureText(error)));

  void (async () => {
    await refresh();
    if (!task) return;
    stream = followEvents(
      `${path}/events`,
      (data) => {
        const event = data as TaskEvent;
        events.append(eventItem(event));
        void refresh();
      },
      () => events.querySelector('.event-end') !== null,
      (message) => (problem.textContent = message),
    );
  })();
  return {
    view: el('section', { class: 'task' }, head, problem, details, input, el('h2', {}, 'Events'), events),
    leave: () => stream?.abort(),
  };
}

/** One event of the log, as text. */
export function eventItem(event: TaskEvent): HTMLElement {
  const { seq, taskId: _taskId, type, at: _at, ...rest } = event as TaskEvent & { at?: string };
  return el(
    'li',
    { class: FINAL_STATUSES.has(type) ? 'event event-end' : 'event', 'data-seq': seq },
    el('strong', {}, type),
    Object.keys(rest).length > 0 ? el('code', {}, ` ${jsonText(rest)}`) : null,
  );
}
