import { useA2aAgent } from '../support/a2a-agent';
import { completes, useAgentServer } from '../support/agent-server';
import { testStack } from '../support/test-stack';
import { agentRegistration, registerAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { startTask, tool, waitForTask } from '../support/tasks';
import { until } from '../support/until';
import { useTestDatabase } from '../support/database';
import { useSecondApi } from '../support/second-api';

describe('an A2A agent registered with protocol "a2a"', () => {
  const a2a = useA2aAgent({
    echo: 'echo',
    slow: 'works-then-completes',
    endless: 'works-until-cancelled',
    broken: 'fails',
  });
  const agents = useAgentServer();
  const database = useTestDatabase();
  // Agents of this service called over A2A are reached through another of its API processes: an
  // agent whose endpoint leads back to the process it is registered with is refused.
  const otherProcess = useSecondApi('a2a-agents');

  /** The agent registered by its card's URL, its skills imported as tools. */
  const registerByCard = () => registerAgent({ protocol: 'a2a', mcpUrl: a2a().cardUrl, capabilities: undefined });

  it("imports its card's skills as tools and calls the JSON-RPC endpoint the card names", async () => {
    const agent = await registerByCard();
    expect(agent).toMatchObject({ protocol: 'a2a', mcpUrl: a2a().endpoint, warnings: [] });
    expect(agent.capabilities.tools).toEqual(
      ['echo', 'slow', 'endless', 'broken'].map((id) => ({
        name: id,
        title: `The ${id} skill`,
        description: expect.stringMatching(/^Does /),
        inputSchema: { type: 'object' },
      })),
    );
    // Given the endpoint instead, the registry reads the card at its origin's well-known path.
    const byEndpoint = await registerAgent({ protocol: 'a2a', mcpUrl: a2a().endpoint, capabilities: undefined });
    expect(byEndpoint.capabilities.tools.map((tool: { name: string }) => tool.name)).toEqual([
      'echo',
      'slow',
      'endless',
      'broken',
    ]);
  });

  it("refreshes its tools from the card at the endpoint's origin", async () => {
    const agent = await registerByCard();
    const refreshed = await call('POST', `/agents/${agent.agentId}/capabilities/refresh`, { apiKey: 'admin' });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ version: 1, mcpUrl: a2a().endpoint, warnings: [] });
    expect(refreshed.body.capabilities).toEqual(agent.capabilities);
  });

  it('runs a task as one SendMessage answered at once: the data part names the skill, the messageId is the task id', async () => {
    const agent = await registerByCard();
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { word: 'hello' } });
    const task = await waitForTask(taskId);
    expect(task).toMatchObject({ status: 'completed', result: { echoed: { word: 'hello' } }, attempts: 1 });
    const sent = a2a().received.find((message) => message.messageId === taskId);
    expect(sent?.parts[0].content).toEqual({ $case: 'data', value: { skill: 'echo', params: { word: 'hello' } } });
    expect(sent?.metadata).toEqual({ skill: 'echo' });
    expect(a2a().versions).not.toContain(undefined);
    expect(new Set(a2a().versions)).toEqual(new Set(['1.0']));
  });

  it('follows a task the agent answers TASK_STATE_WORKING with, with GetTask, until it completes', async () => {
    const agent = await registerByCard();
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/slow', params: {} });
    const working = await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    expect(working).toMatchObject({ status: 'pending', phase: 'awaiting_agent_report' });
    const a2aTaskId = await until(() => a2a().working.at(-1), 'the agent works on a task');
    // Still working after a few polls.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body.status).toBe('pending');
    a2a().finish(a2aTaskId);
    const done = await waitForTask(taskId);
    expect(done).toMatchObject({ status: 'completed', result: { finished: true }, attempts: 1 });
  });

  it("cancels the agent's task with CancelTask when the task is cancelled", async () => {
    const agent = await registerByCard();
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/endless', params: {} });
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    const a2aTaskId = await until(() => a2a().working.at(-1), 'the agent works on a task');
    expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
    await until(() => a2a().cancelled.includes(a2aTaskId), 'the agent was told to cancel');
    expect(await waitForTask(taskId)).toMatchObject({ status: 'cancelled' });
  });

  it("fails the task with the agent's status message when its task ends TASK_STATE_FAILED", async () => {
    const agent = await registerByCard();
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/broken', params: {} });
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'failed',
      error: {
        code: 'AGENT_TOOL_ERROR',
        message: 'the disk is full',
        details: { state: 'TASK_STATE_FAILED' },
      },
    });
  });

  it('sends params {text} alone as a text part', async () => {
    const agent = await registerByCard();
    const taskId = await startTask({
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'plain words' },
    });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { echoed: 'plain words' } });
    const sent = a2a().received.find((message) => message.messageId === taskId);
    expect(sent?.parts.map((part) => part.content)).toEqual([{ $case: 'text', value: 'plain words' }]);
  });

  it('refuses a registration whose card cannot be read, names no A2A 1.0 JSON-RPC interface, or an unusable one', async () => {
    const missing = await call('POST', '/agents', {
      apiKey: 'admin',
      body: {
        name: 'No card',
        description: '',
        defaultPrompt: '',
        protocol: 'a2a',
        mcpUrl: `${a2a().url}/nowhere/.well-known/agent-card.json`,
        chatUrl: 'http://127.0.0.1:9/chat',
      },
    });
    expectError(missing, 422, 'CAPABILITY_IMPORT_FAILED');
    expect(missing.body.error.message).toMatch(/Agent Card .* HTTP 404/);
    const legacy = await call('POST', '/agents', {
      apiKey: 'admin',
      body: { ...agentRegistration({ protocol: 'a2a', mcpUrl: a2a().legacyCardUrl }), capabilities: undefined },
    });
    expect(expectError(legacy, 422, 'CAPABILITY_IMPORT_FAILED').message).toMatch(
      /names no JSONRPC interface of A2A 1\.0/,
    );
    const credentials = await call('POST', '/agents', {
      apiKey: 'admin',
      body: { ...agentRegistration({ protocol: 'a2a', mcpUrl: a2a().credentialsCardUrl }), capabilities: undefined },
    });
    expect(expectError(credentials, 422, 'CAPABILITY_IMPORT_FAILED').message).toMatch(/without credentials/);
  });

  it('answers 400 OPERATION_NOT_SUPPORTED for an operation outside tools, and refuses headers the client sets itself', async () => {
    const agent = await registerByCard();
    const prompt = await call('POST', '/tasks', {
      apiKey: 'admin',
      body: { agentId: agent.agentId, operation: 'prompts/echo', params: {} },
    });
    expect(expectError(prompt, 400, 'OPERATION_NOT_SUPPORTED').message).toMatch(/A2A has only skills/);
    const reserved = await call('POST', '/agents', {
      apiKey: 'admin',
      body: {
        name: 'Reserved header',
        description: '',
        defaultPrompt: '',
        protocol: 'a2a',
        mcpUrl: a2a().cardUrl,
        chatUrl: 'http://127.0.0.1:9/chat',
        headers: { 'A2A-Version': '0.3' },
      },
    });
    expectError(reserved, 400, 'VALIDATION_ERROR');
  });
  it("calls an agent of this service through its own A2A endpoint, registered by its card with the owner's key", async () => {
    const { adminKey } = testStack();
    const baseUrl = otherProcess();
    const inner = await registerAgent({
      mcpUrl: agents().route('a2a-inner', (received) =>
        completes({ echoed: (received.body as { params: unknown }).params })(received),
      ),
      visibility: 'private',
    });
    const outer = await registerAgent({
      protocol: 'a2a',
      mcpUrl: `${baseUrl}/agents/${inner.agentId}/.well-known/agent-card.json`,
      headers: { 'X-Api-Key': adminKey },
      capabilities: undefined,
    });
    expect(outer).toMatchObject({ mcpUrl: `${baseUrl}/a2a/${inner.agentId}`, headerNames: ['X-Api-Key'] });
    // The tool-schemas extension of the card carries the inner tool's schema.
    expect(outer.capabilities.tools).toEqual([
      {
        name: 'echo',
        description: 'Returns its text',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    ]);
    const taskId = await startTask({
      agentId: outer.agentId,
      operation: 'tools/echo',
      params: { text: 'round trip', times: 2 },
    });
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'completed',
      result: { echoed: { text: 'round trip', times: 2 } },
    });
    expect(agents().callsTo('a2a-inner')).toHaveLength(1);
    // The SendMessage named the outer task, and the inner task was started on its behalf.
    const [innerTask] = await database().collection('tasks').find({ agentId: inner.agentId }).toArray();
    expect(innerTask).toMatchObject({ parentTaskId: taskId, rootTaskId: taskId, hops: 1 });
  });
  it("imports skills named after members of JavaScript's objects with their own schemas, and calls them", async () => {
    const { adminKey } = testStack();
    const baseUrl = otherProcess();
    const names = ['__proto__', 'constructor', 'toString'];
    const inner = await registerAgent({
      mcpUrl: agents().route('a2a-object-members', (received) =>
        completes({ echoed: (received.body as { params: unknown }).params })(received),
      ),
      capabilities: { tools: names.map((name) => tool(name, { [`${name}Param`]: { type: 'string' } })) },
    });
    expect(inner.capabilities.tools.map((entry: { name: string }) => entry.name)).toEqual(names);
    const outer = await registerAgent({
      protocol: 'a2a',
      mcpUrl: `${baseUrl}/agents/${inner.agentId}/.well-known/agent-card.json`,
      headers: { 'X-Api-Key': adminKey },
      capabilities: undefined,
    });
    expect(outer.warnings).toEqual([]);
    expect(outer.capabilities.tools).toEqual(names.map((name) => tool(name, { [`${name}Param`]: { type: 'string' } })));
    const taskId = await startTask({
      agentId: outer.agentId,
      operation: 'tools/constructor',
      params: { constructorParam: 'called' },
    });
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'completed',
      result: { echoed: { constructorParam: 'called' } },
    });
  });

  it('leaves out a skill whose card schema is not an object, as an MCP tool, and names it in warnings', async () => {
    const { adminKey } = testStack();
    const baseUrl = otherProcess();
    const inner = await registerAgent({ mcpUrl: agents().route('a2a-inner-scalar', completes({})) });
    // Stored as a registration before the object rule: its card still offers the schema.
    const tools = [
      { name: 'echo', description: 'Returns its text', inputSchema: { type: 'object' } },
      { name: 'count', description: 'Counts', inputSchema: { type: 'integer' } },
    ];
    await database()
      .collection('agents')
      .updateOne({ _id: inner.agentId as never }, { $set: { capabilities: JSON.stringify({ tools }) } });
    const outer = await registerAgent({
      protocol: 'a2a',
      mcpUrl: `${baseUrl}/agents/${inner.agentId}/.well-known/agent-card.json`,
      headers: { 'X-Api-Key': adminKey },
      capabilities: undefined,
    });
    expect(outer.capabilities.tools.map((tool: { name: string }) => tool.name)).toEqual(['echo']);
    expect(outer.warnings).toEqual([
      { capability: 'tools/count', message: expect.stringContaining('/inputSchema/type must be "object"') },
    ]);
  });
  it('follows no redirect: an A2A agent answering 307 refuses the task, and the target is not called', async () => {
    const target = agents().route('a2a-redirect-target', completes({ reached: true }));
    const agent = await registerAgent({
      protocol: 'a2a',
      mcpUrl: agents().route('a2a-redirecting', () => ({ status: 307, headers: { location: target }, body: '' })),
      capabilities: { tools: [{ name: 'echo', description: 'echo', inputSchema: { type: 'object' } }] },
    });
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: {} });
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'failed',
      error: { code: 'AGENT_REJECTED', details: { status: 307 } },
    });
    expect(agents().callsTo('a2a-redirect-target')).toHaveLength(0);
  });
});

describe('an A2A agent whose skill ids are names of members of JavaScript objects', () => {
  const names = ['__proto__', 'constructor', 'toString'];
  // Object.fromEntries makes `__proto__` an own key, where a literal would set the prototype.
  const a2a = useA2aAgent(Object.fromEntries(names.map((name) => [name, 'echo' as const])));

  it('imports each skill as an ordinary tool, without an inputSchema the card does not give, and calls it', async () => {
    const agent = await registerAgent({ protocol: 'a2a', mcpUrl: a2a().cardUrl, capabilities: undefined });
    expect(agent.warnings).toEqual([]);
    expect(agent.capabilities.tools).toEqual(
      names.map((name) => ({
        name,
        title: `The ${name} skill`,
        description: 'Does echo',
        inputSchema: { type: 'object' },
      })),
    );
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/__proto__', params: { word: 'hi' } });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { echoed: { word: 'hi' } } });
  });
});
