import type { Schema } from 'ajv';
import { DIRECTORY_ENDPOINT_ROUTES } from '../a2a/directory-endpoint';
import { A2A_ENDPOINT_ROUTES } from '../a2a/endpoint';
import { A2A_PUSH_ROUTES } from '../a2a/push-routes';
import { AGENT_CARD_ROUTES } from '../a2a/routes';
import { KEY_ROUTES } from '../auth/key-routes';
import { RESOURCE_METADATA_ROUTES } from '../auth/resource-metadata-routes';
import { MCP_SERVER_ROUTES } from '../mcp-server/endpoint';
import { VIRTUAL_SERVER_ROUTES } from '../mcp-server/virtual-server-routes';
import {
  splitRouteKey,
  type Credential,
  type OperationDoc,
  type RouteKey,
  type RouteTable,
} from '../http/route-module';
import { OPS_ROUTES } from './ops-routes';
import { REGISTRY_ROUTES } from '../registry/routes';
import { ROOM_ROUTES } from '../rooms/routes';
import { PRESENCE_ROUTES } from '../room-tasks/presence-routes';
import { TASK_EVENT_ROUTES } from '../tasks/event-routes';
import { SCHEDULE_ROUTES } from '../schedules/routes';
import { TASK_ROUTES } from '../tasks/routes';
import { WEB_APP_ROUTES } from '../web-app/routes';

/** The route tables of every part the API serves; its routers serve exactly these operations. */
export const API_ROUTES: RouteTable[] = [
  OPS_ROUTES,
  KEY_ROUTES,
  REGISTRY_ROUTES,
  AGENT_CARD_ROUTES,
  RESOURCE_METADATA_ROUTES,
  DIRECTORY_ENDPOINT_ROUTES,
  A2A_ENDPOINT_ROUTES,
  A2A_PUSH_ROUTES,
  MCP_SERVER_ROUTES,
  VIRTUAL_SERVER_ROUTES,
  TASK_ROUTES,
  TASK_EVENT_ROUTES,
  SCHEDULE_ROUTES,
  ROOM_ROUTES,
  PRESENCE_ROUTES,
  WEB_APP_ROUTES,
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

/** A route's path as the document writes it: `/agents/:agentId` is `/agents/{agentId}`. */
export const documentedPath = (path: string): string => path.replace(/:(\w+)/g, '{$1}');

/** The OpenAPI 3.1 document of the HTTP API (the WebSocket protocol is described in docs/api.md). */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { versioned, operations } of API_ROUTES) {
    for (const [route, operation] of Object.entries(operations)) {
      const [method, served] = splitRouteKey(route as RouteKey);
      const path = documentedPath(served);
      for (const copy of versioned ? [path, `/v1${path}`] : [path])
        (paths[copy] ??= {})[method.toLowerCase()] = describe(path, operation);
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

function describe(path: string, operation: OperationDoc): Record<string, unknown> {
  const [status, description] = operation.success;
  const pathParameters = [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
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
