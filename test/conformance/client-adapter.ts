/**
 * The "client" the MCP conformance harness (`@modelcontextprotocol/conformance client`) runs: the
 * service, driven through its own API as an integrator would drive it. The harness starts a
 * scenario's MCP server and runs this command with the server's URL as the last argument and the
 * scenario's name in MCP_CONFORMANCE_SCENARIO. The adapter registers that server as an MCP agent
 * (the service initialises a session and reads its lists), runs the calls the scenario expects as
 * tasks, answers each elicitation the service relays (`input-required`) as a person would with
 * the form as offered, every field at its default (SEP-1034), deletes the agent, and exits 0 when
 * every task completed. The service is ACS_BASE_URL, called with the admin key ACS_API_KEY; it
 * must allow loopback agent URLs (ALLOW_PRIVATE_AGENT_URLS, as `npm start` and the tests do).
 *
 * Run with tsx: `tsx test/conformance/client-adapter.ts <server URL>` (docs/conformance.md).
 */

interface Tool {
  name: string;
  inputSchema: { properties?: Record<string, { default?: unknown }> };
}

interface Agent {
  agentId: string;
  capabilities: { tools: Tool[] };
}

/** The calls of each scenario: a tool and its params, from the agent as the service registered it. */
const CALLS: Record<string, (agent: Agent) => Array<[tool: string, params: Record<string, unknown>]>> = {
  initialize: () => [],
  tools_call: () => [['add_numbers', { a: 2, b: 3 }]],
  'elicitation-sep1034-client-defaults': () => [['test_client_elicitation_defaults', {}]],
  'sse-retry': () => [['test_reconnection', {}]],
  // Registering is the scenario: the service reads the tool and its schema, and fetches no $ref.
  'json-schema-ref-no-deref': () => [],
  // The schema the service kept for the focal tool goes back to the server, which compares it with its own.
  'json-schema-2020-12-preservation': (agent) => [
    ['json_schema_echo', { schema: toolOf(agent, 'json_schema_2020_12_tool').inputSchema }],
  ],
};

/** How long one task may take, and how often it is looked at. */
const TASK_DEADLINE_MS = 25_000;
const POLL_MS = 100;

const { ACS_BASE_URL: baseUrl, ACS_API_KEY: apiKey, MCP_CONFORMANCE_SCENARIO: scenario = '' } = process.env;

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': apiKey!, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

function toolOf(agent: Agent, name: string): Tool {
  const tool = agent.capabilities.tools.find((found) => found.name === name);
  if (!tool) throw new Error(`the service registered no tool ${name}: ${JSON.stringify(agent.capabilities.tools)}`);
  return tool;
}

/** A form filled as offered: every field that has a default, at its default. */
function defaultsOf(schema: Tool['inputSchema'] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schema?.properties ?? {}).flatMap(([name, field]) =>
      'default' in field ? [[name, field.default]] : [],
    ),
  );
}

/** Runs one task to its end, answering its input requests; throws unless it completed. */
async function runTask(agentId: string, tool: string, params: Record<string, unknown>): Promise<void> {
  const started = await api('POST', '/tasks', { agentId, operation: `tools/${tool}`, params });
  if (started.status !== 202)
    throw new Error(`POST /tasks answered ${started.status}: ${JSON.stringify(started.body)}`);
  const { taskId } = started.body as { taskId: string };
  const answered = new Set<string>();
  for (const deadline = Date.now() + TASK_DEADLINE_MS; Date.now() < deadline;) {
    const { body: task } = await api('GET', `/tasks/${taskId}`);
    if (task.status === 'completed') return console.log(`${tool}: completed ${JSON.stringify(task.result)}`);
    if (task.status === 'failed' || task.status === 'cancelled')
      throw new Error(`${tool}: ${task.status} ${JSON.stringify(task.error)}`);
    const request = task.inputRequest as { requestId: string; inputSchema?: Tool['inputSchema'] } | undefined;
    if (task.status === 'input-required' && request && !answered.has(request.requestId)) {
      answered.add(request.requestId);
      const input = defaultsOf(request.inputSchema);
      const reply = await api('POST', `/tasks/${taskId}/input`, { requestId: request.requestId, input });
      console.log(`${tool}: answered input request with ${JSON.stringify(input)}: ${reply.status}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(`${tool}: task ${taskId} did not end within ${TASK_DEADLINE_MS} ms`);
}

async function main(): Promise<void> {
  const serverUrl = process.argv.at(-1)!;
  const calls = CALLS[scenario];
  if (!baseUrl || !apiKey) throw new Error('ACS_BASE_URL and ACS_API_KEY name the service to drive');
  if (!calls) throw new Error(`no calls known for scenario ${scenario}`);
  const registered = await api('POST', '/agents', {
    name: `conformance ${scenario}`,
    description: `The MCP conformance scenario ${scenario}`,
    defaultPrompt: '-',
    protocol: 'mcp',
    mcpUrl: serverUrl,
    chatUrl: serverUrl,
  });
  if (registered.status !== 201)
    throw new Error(`registering ${serverUrl} answered ${registered.status}: ${JSON.stringify(registered.body)}`);
  const agent = registered.body as Agent & { warnings: unknown[] };
  console.log(`registered ${agent.agentId}: tools ${agent.capabilities.tools.map((tool) => tool.name).join(', ')}`);
  if (agent.warnings.length > 0) console.log(`warnings: ${JSON.stringify(agent.warnings)}`);
  try {
    for (const [tool, params] of calls(agent)) await runTask(agent.agentId, tool, params);
  } finally {
    // The service ends the agent's kept session (DELETE) once the agent is gone.
    await api('DELETE', `/agents/${agent.agentId}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
