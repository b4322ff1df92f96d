import { JSON_RPC_REQUEST_SCHEMA } from '../a2a/json-rpc';
import type { Schema } from 'ajv';
import { KEY_CREATION_SCHEMA } from '../auth/key-routes';
import {
  AGENT_LIST_QUERY_SCHEMA,
  AGENT_REGISTRATION_SCHEMA,
  AGENT_SEARCH_QUERY_SCHEMA,
  AGENT_UPDATE_SCHEMA,
} from '../registry/registration-schema';
import {
  CREATE_ROOM_SCHEMA,
  MESSAGE_HISTORY_QUERY_SCHEMA,
  PARTICIPANT_QUERY_SCHEMA,
  PARTICIPANT_SCHEMA,
  ROOM_LIST_QUERY_SCHEMA,
  SEND_MESSAGE_SCHEMA,
} from '../rooms/schemas';
import {
  AGENT_REPORT_SCHEMA,
  COMPOSITION_REQUEST_SCHEMA,
  TASK_INPUT_SCHEMA,
  TASK_LOOKUP_QUERY_SCHEMA,
  TASK_REQUEST_SCHEMA,
} from '../tasks/task-request-schema';
import { EVENTS_QUERY_SCHEMA } from '../tasks/event-routes';

type Credential = 'none' | 'any' | 'adminOrService';

/** The endpoints POST /agents requires, each with the alias the server accepts in its place. */
const REQUIRED_ENDPOINTS = { mcpUrl: 'mcpEndpoint', chatUrl: 'chatEndpoint' } as const;

/** What the registration's members mean beyond their types, for the readers of the document. */
const FIELD_DESCRIPTIONS: Record<string, string> = {
  protocol:
    'How the service calls the agent at mcpUrl: "acs" (default), its signed POST; "mcp", the Model Context Protocol over Streamable HTTP; "a2a", A2A 1.0\'s JSON-RPC binding (mcpUrl the endpoint, or the Agent Card\'s URL)',
  headers:
    'Protocols "mcp" and "a2a" only: sent with every MCP or A2A request to mcpUrl and nowhere else (an Authorization bearer token, say). Sealed at rest and never shown again: agent records name them in headerNames. A PATCH replaces them whole; {} removes them',
};

type ObjectSchema = { required?: string[]; properties: Record<string, object> };

/** The registration's members, each with its description; the schemas the server checks stay as they are. */
function describedFields(schema: ObjectSchema): Record<string, object> {
  const properties = { ...schema.properties };
  for (const [name, description] of Object.entries(FIELD_DESCRIPTIONS))
    properties[name] = { ...properties[name], description };
  // Sent, never read back: no answer carries the values.
  properties.headers = { ...properties.headers, writeOnly: true };
  return properties;
}

/**
 * POST /agents as documented. The server requires mcpUrl and chatUrl after folding their aliases
 * into them, and capabilities unless the agent speaks MCP or A2A (src/registry/registration.ts), which
 * AGENT_REGISTRATION_SCHEMA leaves to that code; clients read the schema, so the document says both
 * there, and marks the aliases deprecated.
 */
function documentedRegistrationSchema(): Schema {
  const schema = AGENT_REGISTRATION_SCHEMA as ObjectSchema & { required: string[] };
  const properties = describedFields(schema);
  properties.capabilities = {
    ...properties.capabilities,
    description:
      'Required unless protocol is "mcp" or "a2a": an MCP agent registered without them gets those its server lists (tools/list, resources/list, prompts/list), an A2A agent its Agent Card\'s skills as tools',
  };
  for (const [name, alias] of Object.entries(REQUIRED_ENDPOINTS)) {
    properties[alias] = {
      ...properties[alias],
      deprecated: true,
      description: `Alias of ${name}, accepted in its place`,
    };
  }
  return {
    ...schema,
    required: [...schema.required, ...Object.keys(REQUIRED_ENDPOINTS)],
    properties,
    if: { required: ['protocol'], properties: { protocol: { enum: ['mcp', 'a2a'] } } },
    else: { required: ['capabilities'] },
  };
}

/** PATCH /agents/{agentId} as documented: the update's members, described as a registration's are. */
function documentedUpdateSchema(): Schema {
  const schema = AGENT_UPDATE_SCHEMA as ObjectSchema;
  return { ...schema, properties: describedFields(schema) };
}

/** The error answered when an MCP or A2A agent's capabilities cannot be read. */
const CAPABILITY_IMPORT_ERROR = {
  '422':
    "CAPABILITY_IMPORT_FAILED: the MCP server's capabilities, or the A2A agent's card, could not be read; the message says what it did",
};

/** One HTTP operation of the service, described once; the OpenAPI document is generated from this list. */
interface Operation {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  summary: string;
  credential: Credential;
  /** Served under /v1 too (agent and task routes). */
  versioned?: boolean;
  body?: Schema;
  query?: Schema;
  /** The success status and what it returns. */
  success: [number, string];
  /** Error statuses of this operation beyond those every operation may answer. */
  errors?: Record<string, string>;
}

export const OPERATIONS: Operation[] = [
  { method: 'get', path: '/healthz', summary: 'The process answers', credential: 'none', success: [200, 'Alive'] },
  {
    method: 'get',
    path: '/readyz',
    summary: 'MongoDB and Temporal answer (503 naming what is down)',
    credential: 'none',
    success: [200, 'Ready'],
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics; with METRICS_TOKEN set, only for Authorization: Bearer <METRICS_TOKEN> (else 401)',
    credential: 'none',
    success: [200, 'Metrics in the Prometheus text format'],
  },
  {
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    credential: 'none',
    success: [200, 'OpenAPI 3.1 document'],
  },

  {
    method: 'post',
    path: '/keys',
    summary: 'Create a service API key (shown once, as apiKey and its alias key)',
    credential: 'adminOrService',
    body: KEY_CREATION_SCHEMA,
    success: [201, 'The key'],
  },
  {
    method: 'delete',
    path: '/keys/{keyId}',
    summary: 'Revoke an API key',
    credential: 'adminOrService',
    success: [204, 'Revoked'],
  },

  {
    method: 'post',
    path: '/agents',
    summary:
      'Register an agent; apiKey and signingSecret are shown only here. An MCP agent without capabilities gets those its server lists',
    credential: 'any',
    versioned: true,
    body: documentedRegistrationSchema(),
    success: [
      201,
      'The agent record with apiKey and signingSecret, and warnings [{capability, message}] naming the entries of an MCP server left out when its capabilities were read',
    ],
    errors: CAPABILITY_IMPORT_ERROR,
  },
  {
    method: 'get',
    path: '/agents',
    summary: 'Agents visible to the caller, paged by limit and after',
    credential: 'any',
    versioned: true,
    query: AGENT_LIST_QUERY_SCHEMA,
    success: [200, 'Array of agent records'],
  },
  {
    method: 'get',
    path: '/agents/search',
    summary: 'Ranked search over names, descriptions and tools',
    credential: 'any',
    versioned: true,
    query: AGENT_SEARCH_QUERY_SCHEMA,
    success: [200, 'Array of agent records, best match first'],
  },
  {
    method: 'get',
    path: '/agents/{agentId}',
    summary: 'One agent',
    credential: 'any',
    versioned: true,
    success: [
      200,
      'The agent record, with its protocol; its owner and admins also see owner, sharedWith, callbackUrl and headerNames',
    ],
  },
  {
    method: 'get',
    path: '/agents/{agentId}/.well-known/agent-card.json',
    summary: "The agent's A2A 1.0 Agent Card (docs/a2a.md); a private agent's only to those who may see it",
    credential: 'none',
    success: [200, "An A2A AgentCard: its skills are the agent's tools"],
    errors: { '404': 'AGENT_NOT_FOUND' },
  },
  {
    method: 'post',
    path: '/a2a/{agentId}',
    summary:
      "The agent's A2A 1.0 JSON-RPC endpoint (docs/a2a.md): SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask and SubscribeToTask",
    credential: 'any',
    body: JSON_RPC_REQUEST_SCHEMA,
    success: [
      200,
      'A JSON-RPC response: its result, or its error with an A2A or JSON-RPC code; for SendStreamingMessage and SubscribeToTask a text/event-stream of them',
    ],
    errors: { '404': 'AGENT_NOT_FOUND' },
  },
  {
    method: 'get',
    path: '/.well-known/agent-card.json',
    summary: "The service's own A2A Agent Card: a directory, whose skill is searching the registry",
    credential: 'none',
    success: [200, 'An A2A AgentCard'],
  },
  {
    method: 'patch',
    path: '/agents/{agentId}',
    summary: 'Change an agent (owner or admin); checked like a registration',
    credential: 'any',
    versioned: true,
    body: documentedUpdateSchema(),
    success: [200, 'The agent record'],
  },
  {
    method: 'delete',
    path: '/agents/{agentId}',
    summary: 'Delete an agent and revoke its keys (owner or admin)',
    credential: 'any',
    versioned: true,
    success: [204, 'Deleted'],
  },
  {
    method: 'post',
    path: '/agents/{agentId}/keys/rotate',
    summary: 'Issue a new agent key and signing secret; the old key stops working',
    credential: 'any',
    versioned: true,
    success: [200, 'The new apiKey and signingSecret'],
  },
  {
    method: 'post',
    path: '/agents/{agentId}/capabilities/refresh',
    summary:
      "Read an MCP agent's capabilities from its server, or an A2A agent's from its card, again and store them (owner or admin); 409 for an acs agent",
    credential: 'any',
    versioned: true,
    success: [
      200,
      'The agent record with warnings [{capability, message}]; its version increases only when the capabilities changed',
    ],
    errors: CAPABILITY_IMPORT_ERROR,
  },

  {
    method: 'post',
    path: '/tasks',
    summary: 'Create a task; checks run before anything starts; Idempotency-Key makes a repeat answer the same task',
    credential: 'any',
    versioned: true,
    body: TASK_REQUEST_SCHEMA,
    success: [202, '{taskId, status: "pending"} with Location'],
  },
  {
    method: 'post',
    path: '/tasks/compose',
    summary: 'Create a composition of tasks with parents and pending arguments',
    credential: 'any',
    versioned: true,
    body: COMPOSITION_REQUEST_SCHEMA,
    success: [202, 'Array of {taskId, status, compositionId} in input order'],
  },
  {
    method: 'get',
    path: '/tasks/{taskId}',
    summary:
      'A task: status, phase, result or error (creator, executing agent, admin); with waitMs (up to 30000), a pending task is answered once it ends',
    credential: 'any',
    versioned: true,
    query: TASK_LOOKUP_QUERY_SCHEMA,
    success: [200, 'The task'],
  },
  {
    method: 'post',
    path: '/tasks/{taskId}/result',
    summary: "The executing agent's report on a task it answered 202 to",
    credential: 'any',
    versioned: true,
    body: AGENT_REPORT_SCHEMA,
    success: [200, '{taskId, status}'],
  },
  {
    method: 'post',
    path: '/tasks/{taskId}/input',
    summary:
      "A person's answer to the task's input request (creator, a person in the task's room, admin); checked against its inputSchema; 409 once answered",
    credential: 'any',
    versioned: true,
    body: TASK_INPUT_SCHEMA,
    success: [200, '{taskId, status: "pending", requestId}'],
  },
  {
    method: 'get',
    path: '/tasks/{taskId}/events',
    summary:
      "The task's event log as Server-Sent Events (stored, then live; resume with Last-Event-ID or after), or with format=json as an array",
    credential: 'any',
    versioned: true,
    query: EVENTS_QUERY_SCHEMA,
    success: [200, 'text/event-stream of {seq, taskId, type, at, ...}, or an array of them'],
  },
  {
    method: 'post',
    path: '/tasks/{taskId}/cancel',
    summary: 'Cancel a pending task (creator or admin); dependants fail, delegated tasks are cancelled; 409 once ended',
    credential: 'any',
    versioned: true,
    success: [200, '{taskId, status: "cancelled"}'],
  },
  {
    method: 'get',
    path: '/compositions/{compositionId}',
    summary: 'A composition and its tasks',
    credential: 'any',
    versioned: true,
    success: [200, 'The composition'],
  },
  {
    method: 'get',
    path: '/compositions/{compositionId}/events',
    summary:
      "The composition's event log, every task's, as Server-Sent Events with ids <taskId>:<seq>, or with format=json as an array",
    credential: 'any',
    versioned: true,
    query: EVENTS_QUERY_SCHEMA,
    success: [200, 'text/event-stream of {seq, taskId, type, at, ...}, or an array of them'],
  },

  {
    method: 'post',
    path: '/rooms',
    summary: 'Create a room',
    credential: 'adminOrService',
    body: CREATE_ROOM_SCHEMA,
    success: [201, 'The room record'],
  },
  {
    method: 'get',
    path: '/rooms',
    summary: 'Public rooms',
    credential: 'none',
    query: ROOM_LIST_QUERY_SCHEMA,
    success: [200, 'Array of room records'],
  },
  {
    method: 'get',
    path: '/user/rooms',
    summary: 'Rooms the caller participates in',
    credential: 'any',
    query: ROOM_LIST_QUERY_SCHEMA,
    success: [200, 'Array of room records'],
  },
  {
    method: 'get',
    path: '/rooms/{roomId}',
    summary: 'One room',
    credential: 'none',
    success: [200, 'The room record'],
  },
  {
    method: 'post',
    path: '/rooms/{roomId}/participants',
    summary: 'Add a participant (an agent the caller may see)',
    credential: 'adminOrService',
    body: PARTICIPANT_SCHEMA,
    success: [201, 'The room record'],
  },
  {
    method: 'delete',
    path: '/rooms/{roomId}/participants/{participantId}',
    summary: 'Remove a participant (type says which when a human and an agent share the id)',
    credential: 'adminOrService',
    query: PARTICIPANT_QUERY_SCHEMA,
    success: [200, 'The room record'],
  },
  {
    method: 'get',
    path: '/rooms/{roomId}/messages',
    summary: 'History: the newest limit messages before a message, or those after a seq',
    credential: 'none',
    query: MESSAGE_HISTORY_QUERY_SCHEMA,
    success: [200, 'Array of messages, oldest first'],
  },
  {
    method: 'post',
    path: '/rooms/{roomId}/messages',
    summary: 'Send a message as the caller',
    credential: 'any',
    body: SEND_MESSAGE_SCHEMA,
    success: [201, 'The stored message'],
  },
];

const ERROR_STATUSES: Record<string, string> = {
  '400': 'VALIDATION_ERROR, OPERATION_NOT_SUPPORTED or INVALID_COMPOSITION',
  '401': 'UNAUTHENTICATED',
  '403': 'FORBIDDEN',
  '404': 'NOT_FOUND or AGENT_NOT_FOUND',
  '409': 'CONFLICT',
  '413': 'PAYLOAD_TOO_LARGE',
  '429':
    'RATE_LIMITED: over a limit of the credential or the address (docs/configuration.md, "Limits"); Retry-After says in how many seconds to try again',
  '503': 'UNAVAILABLE',
};

const SECURITY: Record<Credential, Array<Record<string, string[]>>> = {
  none: [{}, { apiKey: [] }, { session: [], identity: [] }],
  any: [{ apiKey: [] }, { session: [], identity: [] }],
  adminOrService: [{ apiKey: [] }],
};

/** The OpenAPI 3.1 document of the HTTP API (the WebSocket protocol is described in docs/api.md). */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of OPERATIONS) {
    for (const path of operation.versioned ? [operation.path, `/v1${operation.path}`] : [operation.path]) {
      (paths[path] ??= {})[operation.method] = describe(operation);
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent coordination service',
      version: '1.0.0',
      description:
        'Agent registry, durable task router and chat rooms. Every non-2xx answer has the body {"error": {"code", "message", "details"?}}.',
    },
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'Admin, service or agent key' },
        session: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Human session token' },
        identity: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Identity-Token',
          description: "Human identity token; its sub is the user's id",
        },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
            },
          },
        },
      },
    },
  };
}

function describe(operation: Operation): Record<string, unknown> {
  const [status, description] = operation.success;
  const pathParameters = [...operation.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const queryProperties = (operation.query as { properties?: Record<string, Schema> } | undefined)?.properties ?? {};
  const queryParameters = Object.entries(queryProperties).map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    schema,
  }));
  return {
    summary: operation.summary,
    security: SECURITY[operation.credential],
    ...(pathParameters.length + queryParameters.length > 0
      ? { parameters: [...pathParameters, ...queryParameters] }
      : {}),
    ...(operation.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: operation.body } } } }
      : {}),
    responses: {
      [String(status)]: { description },
      ...Object.fromEntries(
        Object.entries({ ...ERROR_STATUSES, ...operation.errors }).map(([code, meaning]) => [
          code,
          { description: meaning, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        ]),
      ),
    },
  };
}
