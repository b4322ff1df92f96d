import { api, failureText } from '../api';
import { el, fill, jsonText, type Page } from '../dom';
import type { InputRequest, Message, Participant, Room } from '../records';
import { RoomConnection } from '../room-connection';
import { inputRequestForm } from '../input-form';
import { currentCredentials } from '../session';
import { appLink, statusBadge } from '../task-parts';

/** Messages per history page. */
const PAGE = 50;

/**
 * A room: its history, paged backwards; live messages, presence and task updates over its
 * WebSocket; a message box; and a task request to an agent of the room, whose updates (input
 * requests included, answered in place) appear among the messages.
 */
export function roomPage(roomId: string): Page {
  const credentials = currentCredentials()!;
  const title = el('h1', {}, 'Room');
  const state = el('span', { class: 'connection' }, 'connecting…');
  const present = el('ul', { class: 'presence' });
  const log = el('ol', { class: 'messages' });
  const older = el('button', { type: 'button', class: 'older' }, 'Older messages');
  const problem = el('p', { class: 'problem', role: 'alert' });
  const presentKeys = new Map<string, HTMLElement>();
  let connection: RoomConnection | undefined;
  let oldest: Message | undefined;

  const showPresence = (participant: Participant, here: boolean) => {
    const key = `${participant.type}:${participant.id}`;
    presentKeys.get(key)?.remove();
    presentKeys.delete(key);
    if (!here) return;
    const item = el('li', {}, participant.id, el('span', { class: 'meta' }, ` ${participant.type.toLowerCase()}`));
    presentKeys.set(key, item);
    present.append(item);
  };

  const loadOlder = async () => {
    const query = oldest ? `&before=${encodeURIComponent(oldest.id)}` : '';
    const frames = await api<Array<{ data: Message }>>(
      'GET',
      `/rooms/${encodeURIComponent(roomId)}/messages?limit=${PAGE}${query}`,
    );
    const page = frames.map((frame) => frame.data);
    if (page.length > 0) oldest = page[0];
    log.prepend(...page.map(messageItem));
    older.hidden = page.length < PAGE;
    return page;
  };
  older.addEventListener(
    'click',
    () => void loadOlder().catch((error: unknown) => (problem.textContent = failureText(error))),
  );

  /** Sends a frame, or says the room is not live; whether it went. */
  const send = (type: string, data: Record<string, unknown>): boolean => {
    const sent = connection?.send(type, data) ?? false;
    if (!sent) problem.textContent = 'Not connected: try again once the room is live.';
    return sent;
  };
  const messageBox = el('input', { id: 'message', name: 'message', required: true, autocomplete: 'off' });
  const composer = el(
    'form',
    {
      class: 'composer',
      onsubmit: (event) => {
        event.preventDefault();
        send('MESSAGE', { content: messageBox.value });
        messageBox.value = '';
      },
    },
    messageBox,
    el('button', { type: 'submit' }, 'Send'),
  );
  const taskForm = taskRequestForm(send);

  void (async () => {
    try {
      const room = await api<Room>('GET', `/rooms/${encodeURIComponent(roomId)}`);
      fill(title, room.name);
      fill(
        taskForm.agents,
        el('option', { value: '' }, 'any agent that takes it'),
        ...room.participants
          .filter((p) => p.type === 'AGENT')
          .map((p) => el('option', { value: p.participantId }, p.participantId)),
      );
      const history = await loadOlder();
      connection = new RoomConnection(
        roomId,
        credentials,
        {
          message: (message) => {
            log.append(messageItem(message));
            log.lastElementChild?.scrollIntoView({ block: 'end' });
          },
          frame: (type, data) => {
            if (type === 'SYSTEM' && data.event === 'task_update') log.append(taskUpdateItem(data, send));
            else if (type === 'SYSTEM')
              showPresence(data.participant as Participant, data.event === 'participant_joined');
            else if (type === 'TASK_CREATED')
              log.append(
                el(
                  'li',
                  { class: 'system' },
                  'Task ',
                  appLink(`tasks/${String(data.taskId)}`, String(data.taskId)),
                  ` created on ${String(data.agentId)}`,
                ),
              );
            else if (type === 'ERROR') problem.textContent = `${String(data.code)}: ${String(data.message)}`;
          },
          state: (open, retryInMs) => {
            state.textContent = open
              ? 'live'
              : retryInMs === undefined
                ? 'not connected: the room refuses this credential (admin and service keys take part in no room)'
                : `disconnected: reconnecting in ${Math.round(retryInMs / 1000)} s`;
            state.className = open ? 'connection live' : 'connection';
            // Who came before the socket did: the frames tell only of what follows.
            if (open)
              void api<Participant[]>('GET', `/rooms/${encodeURIComponent(roomId)}/presence`).then(
                (present) => present.forEach((participant) => showPresence(participant, true)),
                (error: unknown) => (problem.textContent = failureText(error)),
              );
          },
        },
        history.map((message) => message.seq),
      );
      connection.open();
    } catch (error) {
      problem.textContent = failureText(error);
    }
  })();

  return {
    view: el(
      'section',
      { class: 'room' },
      el('div', { class: 'room-head' }, title, state),
      el(
        'div',
        { class: 'room-body' },
        el('div', { class: 'room-log' }, older, log, problem, composer, taskForm.form),
        el('aside', {}, el('h2', {}, 'Present'), present),
      ),
    ),
    leave: () => connection?.close(),
  };
}

function messageItem(message: Message): HTMLElement {
  return el(
    'li',
    { class: `message from-${message.sender.type.toLowerCase()}`, 'data-seq': message.seq },
    el('span', { class: 'sender' }, message.sender.id),
    el('time', { datetime: message.timestamp }, new Date(message.timestamp).toLocaleTimeString()),
    el('p', { class: 'content' }, message.content),
  );
}

/** A room task's update; an input request comes with its form, answered with a TASK_INPUT frame. */
function taskUpdateItem(
  data: Record<string, unknown>,
  send: (type: string, data: Record<string, unknown>) => boolean,
): HTMLElement {
  const taskId = String(data.taskId);
  const status = String(data.status);
  const item = el(
    'li',
    { class: 'system task-update', 'data-task-id': taskId },
    'Task ',
    appLink(`tasks/${taskId}`, taskId),
    ' ',
    statusBadge(status),
    data.result === undefined ? null : el('pre', { class: 'result' }, jsonText(data.result)),
    data.error === undefined ? null : el('pre', { class: 'error' }, jsonText(data.error)),
  );
  if (status === 'input-required') {
    const request = data as unknown as InputRequest;
    // A refusal comes later as an ERROR frame, which the page shows.
    const answer = (input: Record<string, unknown>) =>
      send('TASK_INPUT', { taskId, requestId: request.requestId, input })
        ? Promise.resolve()
        : Promise.reject(new Error('Not connected'));
    item.append(inputRequestForm(request, answer));
  }
  return item;
}

/** A TASK_REQUEST to one of the room's agents (or, without one, to whichever takes the operation). */
function taskRequestForm(send: (type: string, data: Record<string, unknown>) => void) {
  const agents = el('select', { id: 'task-agent', name: 'agent' });
  const operation = el('input', { id: 'task-operation', name: 'operation', required: true, placeholder: 'tools/echo' });
  const params = el('textarea', { id: 'task-params', name: 'params', rows: 2 }, '{}');
  const form: HTMLFormElement = el(
    'form',
    {
      class: 'task-request',
      onsubmit: (event) => {
        event.preventDefault();
        let parsed: unknown;
        try {
          parsed = JSON.parse(params.value);
          params.setCustomValidity('');
        } catch {
          params.setCustomValidity('Not valid JSON');
        }
        if (!form.reportValidity()) return;
        send('TASK_REQUEST', {
          requestId: crypto.randomUUID(),
          ...(agents.value === '' ? {} : { agentId: agents.value }),
          operation: operation.value,
          params: parsed,
        });
      },
    },
    el('h2', {}, 'Ask an agent'),
    el('label', { for: 'task-agent' }, 'Agent'),
    agents,
    el('label', { for: 'task-operation' }, 'Operation'),
    operation,
    el('label', { for: 'task-params' }, 'Params (JSON)'),
    params,
    el('button', { type: 'submit' }, 'Request task'),
  );
  return { form, agents };
}
