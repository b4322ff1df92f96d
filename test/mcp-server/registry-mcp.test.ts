import { newServiceKey } from '../support/keys';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { accepts, completes, useAgentServer } from '../support/agent-server';
import { agentRegistration, registerAgent } from '../support/agents';
import { useTestDatabase } from '../support/database';
import { call } from '../support/http';
import { listAllTools } from '../support/mcp-clients';
import { useSecondApi } from '../support/second-api';
import { reportOn, tool, waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { until } from '../support/until';

const META_TASK = 'dev.agent-coordination-service/taskId';
const database = useTestDatabase();
const META_AGENT = 'dev.agent-coordination-service/agent';

/** The official SDK's client on the service's /mcp, with `apiKey`; `elicits` declares form elicitation. */
async function mcpClient(
  options: { apiKey?: string; baseUrl?: string; sessionId?: string; elicits?: boolean } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const { baseUrl, adminKey } = testStack();
  const key = options.apiKey === undefined || options.apiKey === 'admin' ? adminKey : options.apiKey;
  const transport = new StreamableHTTPClientTransport(new URL(`${options.baseUrl ?? baseUrl}/mcp`), {
    requestInit: { headers: { 'x-api-key': key } },
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
  });
  const client = new Client(
    { name: 'registry-mcp-test', version: '1.0.0' },
    { capabilities: options.elicits ? { elicitation: { form: {} } } : {} },
  );
  await client.connect(transport);
  return { client, transport };
}

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
});

async function connected(options: Parameters<typeof mcpClient>[0] = {}) {
  const opened = await mcpClient(options);
  clients.push(opened.client);
  return opened;
}

const taskIdOf = (result: CallToolResult) => result._meta?.[META_TASK] as string;

describe('/mcp: the registry as one MCP server', () => {
  const server = useAgentServer();
  const second = useSecondApi('mcp-sessions');

  it("lists the tools of the agents a caller may see as {agent}.{tool}, and runs a call as a task, through the SDK's client", async () => {
    const owner = (await newServiceKey()).key;
    const name = `Weather ${randomUUID().slice(0, 6)}`;
    const agent = await registerAgent(
      {
        name,
        mcpUrl: server().route('mcp-forecast', completes({ sky: 'clear' })),
        capabilities: { tools: [tool('forecast', { city: { type: 'string' } })] },
        visibility: 'private',
      },
      owner,
    );
    const toolName = `${name.replace(' ', '_')}.forecast`;
    const { client } = await connected({ apiKey: owner });
    const listed = await listAllTools(client);
    const found = listed.find((each) => each.name === toolName);
    expect(found).toMatchObject({
      name: toolName,
      description: 'test tool forecast',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      _meta: { [META_AGENT]: { agentId: agent.agentId, name, version: 1, tool: 'forecast' } },
    });
    // Another service does not see the private agent's tool.
    const { client: stranger } = await connected({ apiKey: (await newServiceKey()).key });
    expect((await listAllTools(stranger)).map((each) => each.name)).not.toContain(toolName);

    const result = (await client.callTool({ name: toolName, arguments: { city: 'Oslo' } })) as CallToolResult;
    expect(result).toMatchObject({
      structuredContent: { sky: 'clear' },
      content: [{ type: 'text', text: '{"sky":"clear"}' }],
    });
    expect(result.isError).toBeFalsy();
    const task = await call('GET', `/tasks/${taskIdOf(result)}`, { apiKey: owner });
    expect(task.body).toMatchObject({
      agentId: agent.agentId,
      operation: 'tools/forecast',
      status: 'completed',
      result: { sky: 'clear' },
    });
    expect(server().callsTo('mcp-forecast').at(-1)?.body).toMatchObject({ params: { city: 'Oslo' } });
    // One record of the call, kept by session and request id; a plain call makes no MCP task to list.
    const taskId = taskIdOf(result);
    expect(await database().collection('mcp_calls').find({ taskId }).toArray()).toHaveLength(1);
    expect(
      await database()
        .collection('mcp_tasks')
        .countDocuments({ _id: taskId as never }),
    ).toBe(0);
    expect((await client.experimental.tasks.listTasks()).tasks.map((each) => each.taskId)).not.toContain(taskId);
    // Its taskId, from the result, works with tasks/get all the same.
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed' });
  });

  it("lists every tool MCP can list, whatever another agent's stored tools hold", async () => {
    const name = `Odd ${randomUUID().slice(0, 6)}`;
    const agent = await registerAgent({ name, capabilities: { tools: [tool('fine')] } });
    // As an agent stored before the registration rules may hold them: schemas MCP's Tool refuses.
    const tools = [
      {
        name: 'fine',
        description: 'an object schema',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'string' },
      },
      { name: 'count', description: 'an integer schema', inputSchema: { type: 'integer' } },
    ];
    await database()
      .collection('agents')
      .updateOne({ _id: agent.agentId as never }, { $set: { capabilities: JSON.stringify({ tools }) } });
    const prefix = name.replace(' ', '_');
    const { client } = await connected();
    const listed = await until(async () => {
      const all = await listAllTools(client);
      return all.some((each) => each.name === `${prefix}.fine` && each.outputSchema === undefined) ? all : undefined;
    }, 'the stored tools listed');
    expect(listed.map((each) => each.name)).not.toContain(`${prefix}.count`);
  });

  it('gives a tool registered without a description one, as MCP clients expect', async () => {
    const name = `Quiet ${randomUUID().slice(0, 6)}`;
    await registerAgent({
      name,
      capabilities: { tools: [{ name: 'hush', description: '', inputSchema: { type: 'object' } }] },
    });
    const { client } = await connected();
    const listed = (await listAllTools(client)).find((each) => each.name === `${name.replace(' ', '_')}.hush`);
    expect(listed?.description).toBe(`Tool hush of agent ${name}`);
  });

  it("answers arguments that fail the tool's schema, and an unknown tool, as errors a model can read", async () => {
    const name = `Strict ${randomUUID().slice(0, 6)}`;
    await registerAgent({ name, capabilities: { tools: [tool('count', { n: { type: 'integer' } })] } });
    const { client } = await connected();
    const refused = (await client.callTool({
      name: `${name.replace(' ', '_')}.count`,
      arguments: { n: 'x' },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(refused.content).toEqual([{ type: 'text', text: expect.stringMatching(/^VALIDATION_ERROR: /) }]);
    await expect(client.callTool({ name: 'No_such_agent.tool', arguments: {} })).rejects.toThrow(/Unknown tool/);
  });

  it('calls a tool registered at another API process at once, and none of an agent deleted at this one', async () => {
    const name = `Fresh ${randomUUID().slice(0, 6)}`;
    const toolName = `${name.replace(' ', '_')}.go`;
    const { client } = await connected();
    // The directory has just read its change counter: a tools/call within a second reads none of its own.
    await expect(client.callTool({ name: 'No_such_agent.tool', arguments: {} })).rejects.toThrow(/Unknown tool/);
    const registered = await call<{ agentId: string }>('POST', '/agents', {
      apiKey: 'admin',
      baseUrl: second(),
      body: agentRegistration({
        name,
        mcpUrl: server().route('mcp-fresh', completes({ ok: true })),
        capabilities: { tools: [tool('go')] },
      }),
    });
    expect(registered.status).toBe(201);
    const result = (await client.callTool({ name: toolName, arguments: {} })) as CallToolResult;
    expect(result).toMatchObject({ structuredContent: { ok: true } });
    expect(result.isError).toBeFalsy();
    expect((await call('DELETE', `/agents/${registered.body.agentId}`, { apiKey: 'admin' })).status).toBe(204);
    await expect(client.callTool({ name: toolName, arguments: {} })).rejects.toThrow(/Unknown tool/);
  });

  it("sends the task's progress as notifications/progress, and a failed task as isError", async () => {
    const name = `Slow ${randomUUID().slice(0, 6)}`;
    const agent = await registerAgent({
      name,
      mcpUrl: server().route('mcp-slow', accepts),
      capabilities: { tools: [tool('work')] },
    });
    const { client } = await connected();
    const progress: Progress[] = [];
    const calling = client.callTool({ name: `${name.replace(' ', '_')}.work`, arguments: {} }, undefined, {
      onprogress: (each) => progress.push(each),
      timeout: 120_000,
    });
    const taskId = await until(() => server().callsTo('mcp-slow')[0]?.body?.taskId as string | undefined, 'the call');
    expect((await reportOn(taskId, agent.apiKey, { status: 'pending', progress: 0.5, message: 'half' })).status).toBe(
      200,
    );
    await until(() => progress.length > 0 || undefined, 'a progress notification');
    expect(
      (await reportOn(taskId, agent.apiKey, { status: 'failed', error: { code: 'NO_SUN', message: 'dark' } })).status,
    ).toBe(200);
    const result = (await calling) as CallToolResult;
    expect(progress[0]).toMatchObject({ progress: 50, total: 100, message: 'half' });
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'NO_SUN: dark' }] });
    expect(taskIdOf(result)).toBe(taskId);
  });

  it('cancels the task when the client cancels the call', async () => {
    const name = `Cancel ${randomUUID().slice(0, 6)}`;
    await registerAgent({
      name,
      mcpUrl: server().route('mcp-cancel', accepts),
      capabilities: { tools: [tool('wait')] },
    });
    const { client } = await connected();
    const abort = new AbortController();
    const calling = client.callTool({ name: `${name.replace(' ', '_')}.wait`, arguments: {} }, undefined, {
      signal: abort.signal,
    });
    const taskId = await until(() => server().callsTo('mcp-cancel')[0]?.body?.taskId as string | undefined, 'the call');
    abort.abort('changed my mind');
    await expect(calling).rejects.toThrow();
    expect((await waitForTask(taskId)).status).toBe('cancelled');
  });

  it("asks a client that declared elicitation for a task's input, and the answer is the task's input", async () => {
    const name = `Asker ${randomUUID().slice(0, 6)}`;
    const agent = await registerAgent({
      name,
      mcpUrl: server().route('mcp-asker', accepts),
      capabilities: { tools: [tool('ask')] },
    });
    const { client } = await connected({ elicits: true });
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { colour: 'green' } };
    });
    const calling = client.callTool({ name: `${name.replace(' ', '_')}.ask`, arguments: {} });
    const taskId = await until(() => server().callsTo('mcp-asker')[0]?.body?.taskId as string | undefined, 'the call');
    const inputSchema = { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] };
    const report = await reportOn(taskId, agent.apiKey, {
      status: 'input-required',
      message: 'Which colour?',
      inputSchema,
    });
    expect(report.status).toBe(200);
    await until(() => asked.length > 0 || undefined, 'the elicitation');
    const answered = await waitForTask(taskId, { until: (task) => task.status === 'pending' });
    expect(asked).toEqual([{ mode: 'form', message: 'Which colour?', requestedSchema: inputSchema }]);
    const events = await call('GET', `/tasks/${taskId}/events?format=json`, { apiKey: 'admin' });
    expect(events.body).toContainEqual(expect.objectContaining({ type: 'input_received', input: { colour: 'green' } }));
    expect(answered.status).toBe('pending');
    expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { painted: true } })).status).toBe(200);
    expect(((await calling) as CallToolResult).structuredContent).toEqual({ painted: true });
  });

  it("serves the registry's own tools: search_agents, run_composition and get_task", async () => {
    const word = `lynx${randomUUID().slice(0, 8)}`;
    const name = `Finder ${randomUUID().slice(0, 6)}`;
    const agent = await registerAgent({
      name,
      description: `Spots a ${word}`,
      mcpUrl: server().route('mcp-composed', completes({ seen: true })),
      capabilities: { tools: [tool('spot')] },
    });
    const { client } = await connected();
    const names = (await listAllTools(client)).map((each) => each.name);
    expect(names).toEqual(expect.arrayContaining(['search_agents', 'run_composition', 'get_task']));

    const found = (await client.callTool({ name: 'search_agents', arguments: { query: word } })) as CallToolResult;
    expect(found.structuredContent).toEqual({
      agents: [
        { agentId: agent.agentId, name, description: `Spots a ${word}`, tools: [`${name.replace(' ', '_')}.spot`] },
      ],
    });

    const spot = { agentId: agent.agentId, operation: 'tools/spot', params: {} };
    const ran = (await client.callTool({
      name: 'run_composition',
      arguments: { tasks: [spot, { ...spot, parents: ['0'] }] },
    })) as CallToolResult;
    const { compositionId, taskIds } = ran.structuredContent as { compositionId: string; taskIds: string[] };
    expect(taskIds).toHaveLength(2);
    await waitForTask(taskIds[1]);
    const read = (await client.callTool({ name: 'get_task', arguments: { taskId: taskIds[1] } })) as CallToolResult;
    expect(read.structuredContent).toMatchObject({ taskId: taskIds[1], status: 'completed', compositionId });
    expect((await call('GET', `/compositions/${compositionId}`, { apiKey: 'admin' })).status).toBe(200);

    const unknown = (await client.callTool({
      name: 'get_task',
      arguments: { taskId: 'no-such-task' },
    })) as CallToolResult;
    expect(unknown).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/^NOT_FOUND: /) }],
    });
    const invalid = (await client.callTool({ name: 'run_composition', arguments: { tasks: [] } })) as CallToolResult;
    expect(invalid).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/^VALIDATION_ERROR: /) }],
    });
    const oversized = (await client.callTool({
      name: 'run_composition',
      arguments: { tasks: Array.from({ length: 101 }, () => spot) },
    })) as CallToolResult;
    expect(oversized).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/^PAYLOAD_TOO_LARGE: A composition holds at most 100/) }],
    });
  });

  it('tells a session notifications/tools/list_changed when the tools the caller may see change', async () => {
    const owner = (await newServiceKey()).key;
    const { client } = await connected({ apiKey: owner });
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
    });
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    // Another's private agent is none of the caller's business.
    await registerAgent(
      { visibility: 'private', capabilities: { tools: [tool('hidden')] } },
      (await newServiceKey()).key,
    );
    const agent = await registerAgent({ visibility: 'private', capabilities: { tools: [tool('seen')] } }, owner);
    await until(() => changes > 0 || undefined, 'notifications/tools/list_changed');
    const before = changes;
    expect(
      (await call('PATCH', `/agents/${agent.agentId}`, { apiKey: owner, body: { description: 'changed' } })).status,
    ).toBe(200);
    await until(() => changes > before || undefined, 'a change of an agent the caller sees');
    expect((await listAllTools(client)).some((listed) => listed.name.endsWith('.seen'))).toBe(true);
  });

  it("keeps its sessions in the store: a session goes on at another API process, and is the caller's only", async () => {
    const name = `Anywhere ${randomUUID().slice(0, 6)}`;
    await registerAgent({
      name,
      mcpUrl: server().route('mcp-anywhere', completes({ ok: true })),
      capabilities: { tools: [tool('go')] },
    });
    const { transport } = await connected();
    const sessionId = transport.sessionId!;
    expect(sessionId).toMatch(/^[\w-]{20,}$/);
    const headers = (apiKey = testStack().adminKey) => ({
      'x-api-key': apiKey,
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    });
    const listed = await fetch(`${second()}/mcp`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain(`${name.replace(' ', '_')}.go`);
    const someoneElse = await fetch(`${testStack().baseUrl}/mcp`, {
      method: 'POST',
      headers: headers((await newServiceKey()).key),
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    expect(someoneElse.status).toBe(404);
    await transport.terminateSession();
    const after = await fetch(`${testStack().baseUrl}/mcp`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }),
    });
    expect(after.status).toBe(404);
  });

  it('refuses a session ended at one API process there at once, and at another within a bounded wait', async () => {
    const { transport } = await connected();
    const sessionId = transport.sessionId!;
    const listTools = (baseUrl: string) =>
      fetch(`${baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          'x-api-key': testStack().adminKey,
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-11-25',
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      }).then(async (reply) => ({ status: reply.status, body: await reply.text() }));
    // Both processes have served the session, so both know it.
    expect((await listTools(second())).status).toBe(200);
    expect((await listTools(testStack().baseUrl)).status).toBe(200);
    await transport.terminateSession();
    const here = await listTools(testStack().baseUrl);
    expect(here.status).toBe(404);
    expect(JSON.parse(here.body).error.code).toBe('NOT_FOUND');
    const there = await until(async () => {
      const reply = await listTools(second());
      return reply.status === 404 ? reply : undefined;
    }, 'the other API process refusing the ended session');
    expect(JSON.parse(there.body).error.code).toBe('NOT_FOUND');
  });
});
