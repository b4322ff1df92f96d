import { api, failureText } from '../api';
import { el, fill, jsonText, type Page } from '../dom';
import type { Agent, Capability } from '../records';
import { schemaForm } from '../schema-form';

/** The registry: every agent the caller may see, searchable, with its tools, their schemas, and a form to run each. */
export function agentsPage(): Page {
  const list = el('div', { class: 'agents' });
  const query = el('input', { id: 'agent-query', type: 'search', placeholder: 'Search agents and tools' });
  const show = async () => {
    const text = query.value.trim();
    try {
      const agents = await api<Agent[]>(
        'GET',
        text === '' ? '/agents?limit=200' : `/agents/search?query=${encodeURIComponent(text)}&limit=50`,
      );
      fill(list, ...(agents.length === 0 ? ['No agents.'] : agents.map(agentCard)));
    } catch (error) {
      fill(list, el('p', { class: 'problem' }, failureText(error)));
    }
  };
  const search = el(
    'form',
    {
      class: 'search',
      onsubmit: (event) => {
        event.preventDefault();
        void show();
      },
    },
    query,
    el('button', { type: 'submit' }, 'Search'),
  );
  void show();
  return { view: el('section', {}, el('h1', {}, 'Agents'), search, list) };
}

function agentCard(agent: Agent): HTMLElement {
  const tools = agent.capabilities?.tools ?? [];
  return el(
    'article',
    { class: 'agent', 'data-agent-id': agent.agentId },
    el('h2', {}, agent.name),
    el('p', {}, agent.description ?? ''),
    el('p', { class: 'meta' }, `${agent.agentId} · ${agent.protocol ?? 'acs'}`),
    ...tools.map((tool) => toolView(agent, tool)),
  );
}

function toolView(agent: Agent, tool: Capability): HTMLElement {
  const runner = el('div', { class: 'runner' });
  return el(
    'details',
    { class: 'tool' },
    el('summary', {}, el('strong', {}, tool.name), ' ', tool.description ?? ''),
    el('pre', { class: 'schema' }, jsonText(tool.inputSchema ?? {})),
    runner,
    el(
      'button',
      { type: 'button', class: 'run-tool', onclick: () => fill(runner, runForm(agent, tool)) },
      'Run as a task',
    ),
  );
}

/** The tool's params from its inputSchema; a run is POST /tasks, then the task's page. */
function runForm(agent: Agent, tool: Capability): HTMLFormElement {
  const { fields, read } = schemaForm(tool.inputSchema);
  const problem = el('p', { class: 'problem', role: 'alert' });
  const form: HTMLFormElement = el(
    'form',
    {
      class: 'run',
      onsubmit: (event) => {
        event.preventDefault();
        const params = read(form);
        if (params === undefined) return;
        api<{ taskId: string }>('POST', '/tasks', {
          agentId: agent.agentId,
          operation: `tools/${tool.name}`,
          params,
        }).then(
          ({ taskId }) => (location.hash = `#/tasks/${taskId}`),
          (error: unknown) => (problem.textContent = failureText(error)),
        );
      },
    },
    fields,
    problem,
    el('button', { type: 'submit' }, 'Run'),
  );
  return form;
}
