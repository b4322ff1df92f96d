import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { completes, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { newServiceKey } from '../support/keys';
import { listAllTools } from '../support/mcp-clients';
import { tool } from '../support/tasks';
import { testStack } from '../support/test-stack';

/** The official SDK's client on `path` (/mcp or /mcp/{serverId}) with `apiKey`. */
async function mcpClient(
  path: string,
  apiKey: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${testStack().baseUrl}${path}`), {
    requestInit: { headers: { 'x-api-key': apiKey } },
  });
  const client = new Client({ name: 'virtual-server-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
});

/** A JSON-RPC request to `path` outside any SDK, as a client of another session or credential would send it. */
function rawMcp(path: string, apiKey: string, body: unknown, sessionId?: string) {
  return call('POST', path, {
    apiKey,
    body,
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
    },
  });
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

describe('MCP virtual servers: /mcp-servers and /mcp/{serverId}', () => {
  const server = useAgentServer();

  /** A private agent of `owner` with tools forecast(city, units) and alerts(city), answering through `route`. */
  async function weatherAgent(owner: string, route: string) {
    const name = `Weather ${randomUUID().slice(0, 6)}`;
    const agent = await registerAgent(
      {
        name,
        mcpUrl: server().route(route, completes({ sky: 'clear' })),
        capabilities: {
          tools: [
            tool('forecast', { city: { type: 'string' }, units: { type: 'string' } }),
            tool('alerts', { city: { type: 'string' } }),
          ],
        },
        visibility: 'private',
      },
      owner,
    );
    return { agent, prefix: name.replace(' ', '_') };
  }

  it('creates, lists, reads, changes and deletes a server, checked at the edge and visible as its visibility says', async () => {
    const owner = (await newServiceKey()).key;
    const stranger = (await newServiceKey()).key;
    const { agent } = await weatherAgent(owner, 'vs-crud');
    const hidden = await registerAgent({ visibility: 'private' }, stranger);
    const entry = { agentId: agent.agentId, tool: 'forecast' };

    expectError(
      await call('POST', '/mcp-servers', { apiKey: owner, body: { name: 'no tools' } }),
      400,
      'VALIDATION_ERROR',
    );
    const badName = expectError(
      await call('POST', '/mcp-servers', { apiKey: owner, body: { name: 'x', tools: [{ ...entry, name: 'a b' }] } }),
      400,
      'VALIDATION_ERROR',
    );
    expect(badName.details).toEqual([{ path: '/tools/0/name', message: expect.stringContaining('MCP tool name') }]);
    const unknown = expectError(
      await call('POST', '/mcp-servers', {
        apiKey: owner,
        body: {
          name: 'x',
          tools: [
            { agentId: agent.agentId, tool: 'nope' },
            { agentId: hidden.agentId, tool: 'echo' },
            { ...entry, name: 'same' },
            { agentId: agent.agentId, tool: 'alerts', name: 'same' },
          ],
        },
      }),
      400,
      'VALIDATION_ERROR',
    );
    expect(unknown.details).toEqual([
      { path: '/tools/0/tool', message: `agent ${agent.agentId} has no tool "nope"` },
      { path: '/tools/1/agentId', message: 'names no agent the caller may see' },
      { path: '/tools/3/name', message: '"same" names another tool of the server' },
    ]);
    expectError(
      await call('POST', '/mcp-servers', { apiKey: agent.apiKey, body: { name: 'x', tools: [entry] } }),
      403,
      'FORBIDDEN',
    );

    const created = await call('POST', '/mcp-servers', {
      apiKey: owner,
      body: {
        name: 'Forecasts',
        description: 'Weather for the team',
        tools: [{ ...entry, defaults: { 'a.b': { $x: 1 } } }],
      },
    });
    expect(created.status).toBe(201);
    const serverId = created.body.serverId as string;
    expect(created.headers.get('location')).toBe(`/mcp-servers/${serverId}`);
    expect(created.body).toMatchObject({
      serverId,
      name: 'Forecasts',
      description: 'Weather for the team',
      url: `/mcp/${serverId}`,
      tools: [{ ...entry, defaults: { 'a.b': { $x: 1 } } }],
      visibility: 'private',
      sharedWith: [],
      owner: { type: 'SERVICE' },
      version: 1,
    });
    expect((await call('GET', `/mcp-servers/${serverId}`, { apiKey: owner })).body).toEqual(created.body);
    expect(
      (await call('GET', '/v1/mcp-servers?limit=200', { apiKey: owner })).body.map((each: any) => each.serverId),
    ).toContain(serverId);

    // Private: another caller is told it does not exist, and does not find it in lists.
    expectError(await call('GET', `/mcp-servers/${serverId}`, { apiKey: stranger }), 404, 'NOT_FOUND');
    expectError(
      await call('PATCH', `/mcp-servers/${serverId}`, { apiKey: stranger, body: { name: 'mine' } }),
      404,
      'NOT_FOUND',
    );
    expect(
      (await call('GET', '/mcp-servers?limit=200', { apiKey: stranger })).body.map((each: any) => each.serverId),
    ).not.toContain(serverId);
    expectError(await call('GET', '/mcp-servers?limit=0', { apiKey: owner }), 400, 'VALIDATION_ERROR');
    expectError(
      await call('PATCH', `/mcp-servers/${serverId}`, { apiKey: owner, body: { tools: [] } }),
      400,
      'VALIDATION_ERROR',
    );

    const changed = await call('PATCH', `/mcp-servers/${serverId}`, {
      apiKey: owner,
      body: { visibility: 'public', name: 'Public forecasts' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      name: 'Public forecasts',
      visibility: 'public',
      version: 2,
      tools: created.body.tools,
    });
    const seen = await call('GET', `/mcp-servers/${serverId}`, { apiKey: stranger });
    expect(seen.status).toBe(200);
    expect(seen.body).not.toHaveProperty('owner');
    expect(seen.body).not.toHaveProperty('sharedWith');
    expectError(
      await call('PATCH', `/mcp-servers/${serverId}`, { apiKey: stranger, body: { name: 'mine' } }),
      403,
      'FORBIDDEN',
    );
    expectError(await call('DELETE', `/mcp-servers/${serverId}`, { apiKey: stranger }), 403, 'FORBIDDEN');

    expect((await call('DELETE', `/mcp-servers/${serverId}`, { apiKey: owner })).status).toBe(204);
    expectError(await call('GET', `/mcp-servers/${serverId}`, { apiKey: owner }), 404, 'NOT_FOUND');
    expectError(await rawMcp(`/mcp/${serverId}`, owner, INITIALIZE), 404, 'NOT_FOUND');
  });

  it("serves only the server's tools, under their names, with its defaults under the caller's arguments", async () => {
    const owner = (await newServiceKey()).key;
    const { agent, prefix } = await weatherAgent(owner, 'vs-call');
    const created = await call('POST', '/mcp-servers', {
      apiKey: owner,
      body: {
        name: 'Oslo weather',
        description: 'Forecasts for Oslo.',
        tools: [
          {
            agentId: agent.agentId,
            tool: 'forecast',
            name: 'oslo_forecast',
            defaults: { city: 'Oslo', units: 'metric' },
          },
          { agentId: agent.agentId, tool: 'forecast' },
        ],
      },
    });
    expect(created.status).toBe(201);
    const { client } = await mcpClient(`/mcp/${created.body.serverId}`, owner);
    expect(client.getInstructions()).toMatch(/^Forecasts for Oslo\./);

    const { tools } = await client.listTools();
    expect(tools.map((each) => each.name)).toEqual([`${prefix}.forecast`, 'oslo_forecast']);
    expect(tools[1].inputSchema).toEqual({
      type: 'object',
      properties: { city: { type: 'string', default: 'Oslo' }, units: { type: 'string', default: 'metric' } },
      required: [],
    });
    expect(tools[0].inputSchema.required).toEqual(['city', 'units']);

    const result = (await client.callTool({
      name: 'oslo_forecast',
      arguments: { units: 'imperial' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ sky: 'clear' });
    expect(server().callsTo('vs-call').at(-1)?.body).toMatchObject({
      operation: 'tools/forecast',
      params: { city: 'Oslo', units: 'imperial' },
    });
    const taskId = result._meta?.['dev.agent-coordination-service/taskId'] as string;
    expect((await call('GET', `/tasks/${taskId}`, { apiKey: owner })).body).toMatchObject({
      agentId: agent.agentId,
      operation: 'tools/forecast',
      status: 'completed',
    });

    // A tool of the agent outside the set is neither listed nor callable here, though /mcp serves it.
    await expect(client.callTool({ name: `${prefix}.alerts`, arguments: { city: 'Oslo' } })).rejects.toThrow(
      /Unknown tool/,
    );
    expect(server().callsTo('vs-call')).toHaveLength(1);
    const { client: whole } = await mcpClient('/mcp', owner);
    expect((await listAllTools(whole)).map((each) => each.name)).toContain(`${prefix}.alerts`);
  });

  it('is 404 to a caller who may not see it, serves no tool of an agent the caller may not see, and binds its sessions to it', async () => {
    const owner = (await newServiceKey()).key;
    const stranger = (await newServiceKey()).key;
    const { agent } = await weatherAgent(owner, 'vs-private');
    const body = { name: 'Mine', tools: [{ agentId: agent.agentId, tool: 'forecast' }] };
    const privateId = (await call('POST', '/mcp-servers', { apiKey: owner, body })).body.serverId as string;

    const refused = await rawMcp(`/mcp/${privateId}`, stranger, INITIALIZE);
    expectError(refused, 404, 'NOT_FOUND');
    expectError(await rawMcp(`/mcp/${randomUUID()}`, owner, INITIALIZE), 404, 'NOT_FOUND');
    await expect(mcpClient(`/mcp/${privateId}`, stranger)).rejects.toThrow();

    // A public server over a private agent: the stranger sees the server, not the agent's tools.
    const publicId = (await call('POST', '/mcp-servers', { apiKey: owner, body: { ...body, visibility: 'public' } }))
      .body.serverId as string;
    const { client: outsider } = await mcpClient(`/mcp/${publicId}`, stranger);
    expect((await outsider.listTools()).tools).toEqual([]);
    await expect(
      outsider.callTool({ name: `${agent.name.replace(' ', '_')}.forecast`, arguments: {} }),
    ).rejects.toThrow(/Unknown tool/);

    // A session belongs to the server path it was opened on.
    const { transport } = await mcpClient(`/mcp/${privateId}`, owner);
    const sessionId = transport.sessionId!;
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    expect((await rawMcp(`/mcp/${privateId}`, owner, list, sessionId)).status).toBe(200);
    expectError(await rawMcp('/mcp', owner, list, sessionId), 404, 'NOT_FOUND');
    expectError(await rawMcp(`/mcp/${publicId}`, owner, list, sessionId), 404, 'NOT_FOUND');
    const { transport: onRegistry } = await mcpClient('/mcp', owner);
    expectError(await rawMcp(`/mcp/${privateId}`, owner, list, onRegistry.sessionId), 404, 'NOT_FOUND');
    expectError(
      await call('DELETE', `/mcp/${publicId}`, { apiKey: owner, headers: { 'mcp-session-id': sessionId } }),
      404,
      'NOT_FOUND',
    );
    await transport.terminateSession();
    expectError(await rawMcp(`/mcp/${privateId}`, owner, list, sessionId), 404, 'NOT_FOUND');
  });

  it('loses no change when two changes of a server race: each one answered 200 is a version of its own', async () => {
    const owner = (await newServiceKey()).key;
    const { agent } = await weatherAgent(owner, 'vs-race');
    const created = await call('POST', '/mcp-servers', {
      apiKey: owner,
      body: { name: 'raced', tools: [{ agentId: agent.agentId, tool: 'alerts' }] },
    });
    expect(created.status).toBe(201);
    const path = `/mcp-servers/${created.body.serverId}`;
    const won: Array<{ version: number; description: string }> = [];
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(
        ['a', 'b'].map((side) => call('PATCH', path, { apiKey: owner, body: { description: `${round}${side}` } })),
      );
      for (const answer of answers) {
        expect([200, 409]).toContain(answer.status);
        if (answer.status === 200) won.push({ version: answer.body.version, description: answer.body.description });
      }
    }
    const versions = won.map((each) => each.version);
    expect(new Set(versions).size).toBe(versions.length);
    const last = won.reduce((latest, each) => (each.version > latest.version ? each : latest));
    expect((await call('GET', path, { apiKey: owner })).body).toMatchObject(last);
  });
});
