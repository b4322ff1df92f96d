import { failureText } from './api';
import { el } from './dom';
import type { InputRequest } from './records';
import { schemaForm } from './schema-form';

/**
 * The form of a task's input request, generated from its inputSchema and checked in the browser;
 * `answer` sends the input (POST /tasks/{taskId}/input on a task's page, a TASK_INPUT frame in a
 * room), and the service checks it again. A page to open (an MCP URL-mode request) is shown whole,
 * as text and link, so the person sees where it leads.
 */
export function inputRequestForm(
  request: InputRequest,
  answer: (input: Record<string, unknown>) => Promise<unknown>,
): HTMLFormElement {
  const { fields, read } = schemaForm(request.inputSchema);
  const problem = el('p', { class: 'problem', role: 'alert' });
  const submit = el('button', { type: 'submit' }, 'Send answer');
  const form: HTMLFormElement = el(
    'form',
    {
      class: 'input-request',
      onsubmit: (event) => {
        event.preventDefault();
        const input = read(form);
        if (input === undefined) return;
        submit.disabled = true;
        answer(input).then(
          () => form.replaceChildren(el('p', { class: 'answered' }, 'Answer sent.')),
          (error: unknown) => {
            problem.textContent = failureText(error);
            submit.disabled = false;
          },
        );
      },
    },
    el('h2', {}, 'Input requested'),
    el('p', { class: 'request-message' }, request.message),
    request.url && /^https?:/.test(request.url)
      ? el(
          'p',
          {},
          'Page to open: ',
          el('a', { href: request.url, target: '_blank', rel: 'noopener noreferrer' }, request.url),
        )
      : null,
    fields,
    problem,
    submit,
  );
  return form;
}
