import { ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { agentRegistration, registerAgent } from '../support/agents';
import { useTestDatabase } from '../support/database';
import { call, expectError } from '../support/http';
import { useMcpServer } from '../support/mcp-server';
import { waitForTask, startTask } from '../support/tasks';

const BEARER = 'Bearer mcp-owner-secret-7d1f';

/** The tools the next tools/list answers: a test changes them to see a refresh pick the change up. */
let listed: Tool[] = [];
const tool = (name: string, inputSchema: Record<string, unknown> = { type: 'object' }): Tool =>
  ({ name, description: `the ${name} tool`, inputSchema }) as Tool;

/** A server with raw tool definitions (no SDK conversion), so that a test can offer ones that break the registry's rules. */
function rawTools(server: McpServer): void {
  server.server.registerCapabilities({ tools: {} });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
}

describe('registering an MCP agent', () => {
  const mcp = useMcpServer({ setup: rawTools });
  const guarded = useMcpServer({ setup: rawTools, requiredHeaders: { authorization: BEARER } });
  const db = useTestDatabase();

  beforeEach(() => {
    listed = [tool('lookup', { type: 'object', properties: { word: { type: 'string' } } })];
  });

  it('imports the tools that pass the registration rules and names the others in warnings', async () => {
    listed = [
      tool('fine'),
      tool('bad name'),
      tool('odd-schema', { type: 'object', properties: { a: { type: 'string', notAKeyword: true } } }),
    ];
    const agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
    expect(agent.capabilities).toEqual({
      tools: [{ name: 'fine', description: 'the fine tool', inputSchema: { type: 'object' } }],
    });
    expect(agent.warnings).toHaveLength(2);
    expect(agent.warnings[0]).toMatchObject({
      capability: 'tools/bad name',
      message: expect.stringMatching(/pattern/),
    });
    expect(agent.warnings[1]).toMatchObject({
      capability: 'tools/odd-schema',
      message: expect.stringMatching(/^invalid inputSchema: .*notAKeyword/),
    });
  });

  it('leaves out a tool whose inputSchema is not an object, as MCP requires, and names it in warnings', async () => {
    listed = [tool('fine'), tool('scalar', { type: 'string' }), tool('untyped', { properties: {} })];
    const agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
    expect(agent.capabilities.tools.map((entry: { name: string }) => entry.name)).toEqual(['fine']);
    const refused = 'not an MCP tool: /inputSchema/type Invalid input: expected "object"';
    expect(agent.warnings).toEqual([
      { capability: 'tools/scalar', message: refused },
      { capability: 'tools/untyped', message: refused },
    ]);
  });

  it('imports a tool whose schema is JSON Schema 2020-12, keeps it as sent (not dereferenced), and checks params with it', async () => {
    // As pydantic writes a model with a nested one: $schema, $defs and a $ref, and 2020-12's keywords.
    const inputSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        Size: {
          type: 'object',
          properties: { w: { type: 'integer' }, h: { type: 'integer' } },
          required: ['w', 'h'],
          additionalProperties: false,
        },
      },
      properties: {
        size: { $ref: '#/$defs/Size' },
        range: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false },
      },
      required: ['size'],
      unevaluatedProperties: false,
    };
    listed = [tool('resize', inputSchema)];
    const agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
    expect(agent.warnings).toEqual([]);
    const view = await call('GET', `/agents/${agent.agentId}`, { apiKey: 'admin' });
    expect(JSON.stringify(view.body.capabilities.tools[0].inputSchema)).toBe(JSON.stringify(inputSchema));

    const taskId = await startTask({
      agentId: agent.agentId,
      operation: 'tools/resize',
      params: { size: { w: 1, h: 2 }, range: [0, 1] },
    });
    // The params passed, so the tool was called; the raw server has no tools/call ("method not found").
    expect(await waitForTask(taskId)).toMatchObject({ status: 'failed', error: { details: { code: -32601 } } });
    expect(
      mcp()
        .callsOf('tools/call')
        .some((request) => request.toolName === 'resize'),
    ).toBe(true);
    const refused = await call('POST', '/tasks', {
      apiKey: 'admin',
      body: { agentId: agent.agentId, operation: 'tools/resize', params: { size: { w: 1, h: 2 }, range: [0, 1, 2] } },
    });
    expect(expectError(refused, 400, 'VALIDATION_ERROR').details).toEqual([
      { path: '/range', message: 'must NOT have more than 2 items' },
    ]);
  });

  it('takes capabilities given by hand as they are, without reading the server', async () => {
    const before = mcp().callsOf('initialize').length;
    const agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url });
    expect(agent.capabilities.tools.map((entry: { name: string }) => entry.name)).toEqual(['echo']);
    expect(agent.warnings).toBeUndefined();
    expect(mcp().callsOf('initialize')).toHaveLength(before);
  });

  it('refuses an acs agent without capabilities, and answers 422 when the MCP server cannot be read', async () => {
    expectError(
      await call('POST', '/agents', { apiKey: 'admin', body: { ...registrationWithout('capabilities') } }),
      400,
      'VALIDATION_ERROR',
    );
    const unreachable = await call('POST', '/agents', {
      apiKey: 'admin',
      body: { ...registrationWithout('capabilities'), protocol: 'mcp', mcpUrl: 'http://127.0.0.1:9/mcp' },
    });
    expect(unreachable.status).toBe(422);
    expect(unreachable.body.error.code).toBe('CAPABILITY_IMPORT_FAILED');
    expect(unreachable.body.error.message).toMatch(
      /^Reading the capabilities of the MCP server at http:\/\/127\.0\.0\.1:9\/mcp failed/,
    );
  });

  it('sends the owner headers to the server, seals them at rest and shows them by name only', async () => {
    const refused = await call('POST', '/agents', {
      apiKey: 'admin',
      body: { ...registrationWithout('capabilities'), protocol: 'mcp', mcpUrl: guarded().url },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.message).toMatch(/HTTP 401|401/);

    listed = [tool('lookup')];
    const agent = await registerAgent({
      protocol: 'mcp',
      mcpUrl: guarded().url,
      capabilities: undefined,
      headers: { Authorization: BEARER },
    });
    expect(agent.headerNames).toEqual(['Authorization']);
    expect(JSON.stringify(agent)).not.toContain('mcp-owner-secret');
    const view = await call('GET', `/agents/${agent.agentId}`, { apiKey: 'admin' });
    expect(view.body.headerNames).toEqual(['Authorization']);
    expect(view.body.headers).toBeUndefined();
    expect(JSON.stringify(view.body)).not.toContain('mcp-owner-secret');
    const listedAgents = await call('GET', '/agents?limit=200', { apiKey: 'admin' });
    expect(JSON.stringify(listedAgents.body)).not.toContain('mcp-owner-secret');

    const stored = await db()
      .collection('agents')
      .findOne({ _id: agent.agentId as never });
    expect(stored?.headers).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toContain('mcp-owner-secret');

    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/lookup', params: {} });
    // The raw server has no tools/call: a JSON-RPC "method not found", final at the first attempt.
    const ended = await waitForTask(taskId);
    expect(ended).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'AGENT_REJECTED', details: { code: -32601 } },
    });
    const calls = guarded().callsOf('tools/call');
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((request) => request.headers.authorization === BEARER)).toBe(true);
  });

  it('refuses headers on an acs agent, headers the transport sets, and values with line breaks', async () => {
    expectError(
      await call('POST', '/agents', {
        apiKey: 'admin',
        body: { ...registrationWithout(), headers: { Authorization: BEARER } },
      }),
      400,
      'VALIDATION_ERROR',
    );
    for (const headers of [
      { 'Mcp-Session-Id': 'x' },
      { 'Content-Type': 'text/plain' },
      { Authorization: 'a\r\nb: c' },
    ]) {
      expectError(
        await call('POST', '/agents', {
          apiKey: 'admin',
          body: { ...registrationWithout(), protocol: 'mcp', mcpUrl: mcp().url, headers },
        }),
        400,
        'VALIDATION_ERROR',
      );
    }
  });

  it('removes the headers with headers {} and switches protocol with PATCH', async () => {
    const agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, headers: { 'X-Team': 'blue' } });
    expect(agent.headerNames).toEqual(['X-Team']);
    const cleared = await call('PATCH', `/agents/${agent.agentId}`, { apiKey: 'admin', body: { headers: {} } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.headerNames).toEqual([]);
    expect(
      (
        await db()
          .collection('agents')
          .findOne({ _id: agent.agentId as never })
      )?.headers,
    ).toBeUndefined();
    const switched = await call('PATCH', `/agents/${agent.agentId}`, { apiKey: 'admin', body: { protocol: 'acs' } });
    expect(switched.status).toBe(200);
    expect(switched.body.protocol).toBe('acs');
  });
});

describe('refreshing an MCP agent capabilities', () => {
  const mcp = useMcpServer({ setup: rawTools });

  it('reads them again: the version increases only when they changed', async () => {
    listed = [tool('first')];
    const agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
    expect(agent.version).toBe(1);

    const unchanged = await call('POST', `/agents/${agent.agentId}/capabilities/refresh`, { apiKey: 'admin' });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toMatchObject({ version: 1, warnings: [] });

    listed = [tool('first'), tool('second'), tool('not valid!')];
    const changed = await call('POST', `/agents/${agent.agentId}/capabilities/refresh`, { apiKey: 'admin' });
    expect(changed.status).toBe(200);
    expect(changed.body.version).toBe(2);
    expect(changed.body.capabilities.tools.map((entry: { name: string }) => entry.name)).toEqual(['first', 'second']);
    expect(changed.body.warnings).toEqual([{ capability: 'tools/not valid!', message: expect.any(String) }]);
    const read = await call('GET', `/agents/${agent.agentId}`, { apiKey: 'admin' });
    expect(read.body.version).toBe(2);
    expect(read.body.capabilities.tools).toHaveLength(2);

    // The service checks params against the imported schemas of the new version.
    await startTask({ agentId: agent.agentId, operation: 'tools/second', params: {} });
  });

  it('is for the owner or an admin, and for MCP agents only', async () => {
    listed = [tool('first')];
    const owner = (await call('POST', '/keys', { apiKey: 'admin', body: { description: 'owner' } })).body.apiKey;
    const stranger = (await call('POST', '/keys', { apiKey: 'admin', body: { description: 'stranger' } })).body.apiKey;
    const agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined }, owner);
    expectError(
      await call('POST', `/agents/${agent.agentId}/capabilities/refresh`, { apiKey: stranger }),
      403,
      'FORBIDDEN',
    );
    expect((await call('POST', `/agents/${agent.agentId}/capabilities/refresh`, { apiKey: owner })).status).toBe(200);
    const acs = await registerAgent({});
    expectError(
      await call('POST', `/agents/${acs.agentId}/capabilities/refresh`, { apiKey: 'admin' }),
      409,
      'CONFLICT',
    );
    expectError(
      await call('POST', '/agents/6b0c1d9e-0000-4000-8000-000000000000/capabilities/refresh', { apiKey: 'admin' }),
      404,
      'AGENT_NOT_FOUND',
    );
  });
});

/** A valid registration body without some members. */
function registrationWithout(...members: string[]): Record<string, unknown> {
  const body = agentRegistration();
  for (const member of members) delete body[member];
  return body;
}
