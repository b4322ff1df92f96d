import { randomUUID } from 'node:crypto';
import { call, type CallOptions } from './http';

/** A registration body that passes every rule: one tool with an inputSchema, endpoints on loopback. */
export function agentRegistration(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const port = 9; // discard: nothing listens; tests that need a live agent override mcpUrl
  return {
    name: `Test agent ${randomUUID().slice(0, 8)}`,
    description: 'Echoes what it is given',
    defaultPrompt: 'Hello, what shall I echo?',
    mcpUrl: `http://127.0.0.1:${port}/mcp`,
    chatUrl: `http://127.0.0.1:${port}/chat`,
    capabilities: {
      tools: [
        {
          name: 'echo',
          description: 'Returns its text',
          inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          annotations: { outputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
        },
      ],
    },
    ...overrides,
  };
}

export interface RegisteredAgent {
  agentId: string;
  id: string;
  apiKey: string;
  signingSecret: string;
  [field: string]: any;
}

/** Registers an agent (as admin unless told otherwise) and returns the 201 body, secrets included; throws on any other status. */
export function registerAgent(overrides: Record<string, unknown> = {}, apiKey = 'admin'): Promise<RegisteredAgent> {
  return registerAgentWith({ apiKey }, overrides);
}

/** registerAgent with any credential, for instance a human's headers (test/support/humans.ts). */
export async function registerAgentWith(
  credentials: Pick<CallOptions, 'apiKey' | 'headers'>,
  overrides: Record<string, unknown> = {},
): Promise<RegisteredAgent> {
  const reply = await call<RegisteredAgent>('POST', '/agents', { ...credentials, body: agentRegistration(overrides) });
  if (reply.status !== 201)
    throw new Error(`registering an agent answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** Every page of GET `path` with `limit`, following `after`; bounded. */
export async function allPages(
  path: string,
  options: Pick<CallOptions, 'apiKey' | 'headers' | 'baseUrl'>,
  limit: number,
): Promise<string[]> {
  const seen: string[] = [];
  for (let page = 0; page < 500; page += 1) {
    const separator = path.includes('?') ? '&' : '?';
    const after = seen.length > 0 ? `&after=${seen[seen.length - 1]}` : '';
    const reply = await call('GET', `${path}${separator}limit=${limit}${after}`, options);
    expect(reply.status).toBe(200);
    expect(reply.body.length).toBeLessThanOrEqual(limit);
    if (reply.body.length === 0) return seen;
    seen.push(...(reply.body as Array<{ agentId: string }>).map((agent) => agent.agentId));
  }
  throw new Error('paging did not end');
}
