import { randomUUID } from 'node:crypto';
import { requirePrincipal, type Principal } from '../auth/principal';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { serviceOriginOf } from '../http/service-origin';
import type { ListedAgent } from '../registry/agent';
import type { AgentDirectory } from '../registry/agent-directory';
import { SEARCH_AGENTS_PAGE, searchAgents, type SearchAgentsParams } from '../registry/agent-search';
import { answerJsonRpc, jsonRpcErrorsOn, methodNotServed } from './a2a-exchange';
import { SEARCH_AGENTS_SKILL } from './agent-card';
import { JSON_RPC_REQUEST_SCHEMA, JsonRpcCode, JsonRpcError } from './json-rpc';
import {
  paramsOf,
  refusePushConfig,
  refuseUnsupportedParts,
  skillCallOf,
  type MessagePart,
  type SendMessageParams,
} from './method-params';

export const DIRECTORY_ENDPOINT_ROUTES = routeTable({
  versioned: false,
  operations: {
    'POST /a2a': {
      summary:
        "The service's own A2A 1.0 JSON-RPC endpoint, a directory (docs/a2a.md): SendMessage searches the agents the caller may see and answers a message",
      credential: 'any',
      body: JSON_RPC_REQUEST_SCHEMA,
      success: [
        200,
        'A JSON-RPC response: for SendMessage a message listing the agents found, each with its Agent Card and endpoint; errors with an A2A or JSON-RPC code and google.rpc.ErrorInfo data; 204 and nothing done for a notification (no id)',
      ],
    },
  },
});

export interface DirectoryEndpointDeps {
  directory: Pick<AgentDirectory, 'listVisible' | 'searchCandidates' | 'findVisibleByIds'>;
}

/**
 * `POST /a2a`: the interface of the service's own Agent Card. Its one skill, `search-agents`, answers
 * at once with a message (A2A 1.0 §3.1.1 lets a SendMessage answer without a task), so it keeps no
 * tasks: GetTask, CancelTask and SubscribeToTask find none, ListTasks lists none. It does not stream.
 */
export function createDirectoryEndpoint(deps: DirectoryEndpointDeps): RouteModule {
  const router = new DocumentedRouter(DIRECTORY_ENDPOINT_ROUTES);
  router.serve('POST /a2a', async (ctx) => {
    const principal = requirePrincipal(ctx);
    await answerJsonRpc(ctx, async ({ method, params }) => {
      switch (method) {
        case 'SendMessage':
          return { result: await search(principal, paramsOf('SendMessage', params), serviceOriginOf(ctx)) };
        case 'SendStreamingMessage':
        case 'SubscribeToTask':
          throw new JsonRpcError(JsonRpcCode.UNSUPPORTED_OPERATION, `${method}: the directory does not stream`);
        case 'GetTask':
        case 'CancelTask': {
          const { id } = paramsOf('TaskId', params);
          throw new JsonRpcError(JsonRpcCode.TASK_NOT_FOUND, `Task ${id} not found: the directory keeps no tasks`, {
            metadata: { taskId: id },
          });
        }
        case 'ListTasks':
          return {
            result: { tasks: [], nextPageToken: '', pageSize: paramsOf('ListTasks', params).pageSize, totalSize: 0 },
          };
        default:
          throw methodNotServed(method);
      }
    });
  });

  async function search(principal: Principal, { message, configuration }: SendMessageParams, origin: string) {
    refusePushConfig(configuration);
    refuseUnsupportedParts(message.parts);
    const asked = searchOf(message.parts);
    const limit = asked.limit ?? SEARCH_AGENTS_PAGE.default;
    const found = await searchAgents(deps.directory, principal, { ...asked, limit });
    const next = found.length === limit ? found.at(-1)?.id : undefined;
    return {
      message: {
        messageId: randomUUID(),
        role: 'ROLE_AGENT',
        ...(message.contextId ? { contextId: message.contextId } : {}),
        parts: [
          { text: summaryOf(found) },
          {
            data: { agents: found.map((agent) => entryOf(agent, origin)), ...(next ? { next } : {}) },
            mediaType: 'application/json',
          },
        ],
      },
    };
  }

  return { ...router.module(), presentErrors: jsonRpcErrorsOn(DIRECTORY_PATH) };
}

/** The path of `POST /a2a` as the router matches it: any case, with a trailing slash or not. */
const DIRECTORY_PATH = /^\/a2a\/?$/i;

/**
 * What the message asks: a data part `{skill?, params}` (the skill, if named, must be
 * `search-agents`), else a text part as the query.
 */
function searchOf(parts: MessagePart[]): SearchAgentsParams {
  const called = skillCallOf(parts);
  if (called) {
    if (called.skill !== undefined && called.skill !== SEARCH_AGENTS_SKILL)
      throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, `The directory's one skill is ${SEARCH_AGENTS_SKILL}`);
    return paramsOf('SearchAgents', called.params);
  }
  const text = parts.find((part) => typeof part.text === 'string')?.text;
  if (text !== undefined) return paramsOf('SearchAgents', { query: text });
  throw new JsonRpcError(JsonRpcCode.INVALID_PARAMS, 'The message needs a text part (the query) or a data part');
}

/** An agent as the directory lists it: enough to choose it and reach it over A2A. */
function entryOf(agent: ListedAgent, origin: string) {
  return {
    agentId: agent.id,
    name: agent.name,
    description: agent.description,
    skills: agent.capabilities.tools.map((tool) => tool.name),
    agentCardUrl: `${origin}/agents/${agent.id}/.well-known/agent-card.json`,
    url: `${origin}/a2a/${agent.id}`,
  };
}

function summaryOf(found: ListedAgent[]): string {
  if (found.length === 0) return 'No agent found';
  return `${found.length} agent${found.length === 1 ? '' : 's'} found: ${found.map((agent) => agent.name).join(', ')}`;
}
