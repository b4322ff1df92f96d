import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/principal';
import { ApiError, ErrorCode } from '../http/errors';
import { validator } from '../http/validate';
import type { AgentDirectory } from '../registry/agent-directory';
import {
  SEARCH_AGENTS_PAGE,
  SEARCH_AGENTS_SCHEMA,
  searchAgents,
  type SearchAgentsParams,
} from '../registry/agent-search';
import { readableTask } from '../tasks/task-access';
import { COMPOSITION_REQUEST_SCHEMA } from '../tasks/task-request-schema';
import type { TaskRequest } from '../../workflows/task-types';
import type { TaskLauncher } from '../tasks/task-launcher';
import type { TaskStore } from '../tasks/task-store';
import { toTaskView } from '../tasks/task-views';
import { refusedCall } from './call-results';
import type { CatalogTool } from './tool-catalog';

export interface RegistryToolDeps {
  directory: Pick<AgentDirectory, 'listVisible' | 'searchCandidates' | 'findVisibleByIds'>;
  launcher: Pick<TaskLauncher, 'launchComposition'>;
  taskStore: Pick<TaskStore, 'find'>;
}

const GET_TASK_SCHEMA = {
  type: 'object',
  required: ['taskId'],
  additionalProperties: false,
  properties: { taskId: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;

const RUN_COMPOSITION_SCHEMA = {
  type: 'object',
  required: ['tasks'],
  additionalProperties: false,
  properties: { tasks: COMPOSITION_REQUEST_SCHEMA },
} as const;

/**
 * The registry's own tools, beside the agents'. Their names have no dot, so no agent's tool
 * (`{agent}.{tool}`) can take them.
 */
export const REGISTRY_TOOLS: readonly Tool[] = [
  {
    name: 'search_agents',
    title: 'Search the registry',
    description:
      "Finds the agents you may see, ranked by the query's words, or those that offer a capability (tools/translate); each with its tools' names here.",
    inputSchema: SEARCH_AGENTS_SCHEMA,
  },
  {
    name: 'run_composition',
    title: 'Run a composition',
    description:
      'Starts tasks that may wait for each other (parents, pending arguments), as POST /tasks/compose does; answers their taskIds and compositionId at once. Read each with get_task.',
    inputSchema: RUN_COMPOSITION_SCHEMA as unknown as Tool['inputSchema'],
  },
  {
    name: 'get_task',
    title: 'Read a task',
    description: 'A task as GET /tasks/{taskId} shows it: status, phase, result or error.',
    inputSchema: GET_TASK_SCHEMA as unknown as Tool['inputSchema'],
  },
];

const checkSearch = validator<SearchAgentsParams>(SEARCH_AGENTS_SCHEMA, 'search_agents arguments');
const checkComposition = validator<{ tasks: TaskRequest[] }>(RUN_COMPOSITION_SCHEMA, 'run_composition arguments');
const checkGetTask = validator<{ taskId: string }>(GET_TASK_SCHEMA, 'get_task arguments');

/** Answers a call of registry tool `name`; undefined when `name` is none of them. */
export async function callRegistryTool(
  deps: RegistryToolDeps,
  principal: Principal,
  name: string,
  args: Record<string, unknown>,
  catalog: () => Promise<CatalogTool[]>,
): Promise<CallToolResult | undefined> {
  try {
    switch (name) {
      case 'search_agents':
        return structured(await search(deps, principal, checkSearch(args), catalog));
      case 'run_composition': {
        const { tasks } = checkComposition(args);
        return structured({ ...(await deps.launcher.launchComposition(principal, tasks)) });
      }
      case 'get_task': {
        const { taskId } = checkGetTask(args);
        return structured({ ...toTaskView(readableTask(principal, await deps.taskStore.find(taskId), taskId)) });
      }
      default:
        return undefined;
    }
  } catch (error) {
    // A refusal is the model's to read and act on, as an agent's tool's is.
    if (error instanceof ApiError && error.code !== ErrorCode.INTERNAL && error.code !== ErrorCode.UNAVAILABLE)
      return refusedCall(error);
    throw error;
  }
}

/** One page of the search, each agent with its tools' names on /mcp. */
async function search(
  deps: RegistryToolDeps,
  principal: Principal,
  asked: SearchAgentsParams,
  catalog: () => Promise<CatalogTool[]>,
): Promise<Record<string, unknown>> {
  const limit = asked.limit ?? SEARCH_AGENTS_PAGE.default;
  const found = await searchAgents(deps.directory, principal, { ...asked, limit });
  const toolsOf = new Map<string, string[]>();
  for (const named of await catalog()) toolsOf.set(named.agentId, [...(toolsOf.get(named.agentId) ?? []), named.name]);
  const next = found.length === limit ? found.at(-1)?.id : undefined;
  return {
    agents: found.map((agent) => ({
      agentId: agent.id,
      name: agent.name,
      description: agent.description,
      tools: toolsOf.get(agent.id) ?? [],
    })),
    ...(next ? { next } : {}),
  };
}

function structured(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}
