import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { completes, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { newServiceKey } from '../support/keys';
import { tool } from '../support/tasks';
import { testStack } from '../support/test-stack';

/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector-cli`), a client no one here wrote,
 * lists and calls the tools of /mcp over Streamable HTTP with an API key header. It prints a
 * deprecation notice on stderr (docs/conformance.md); its answers are JSON on stdout.
 */

const CLI_DIR = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/inspector-cli/build');
const META_TASK = 'dev.agent-coordination-service/taskId';
/** A bound for a CLI that hangs, not a measure of speed. */
const CLI_TIMEOUT_MS = 60_000;

/** Runs the CLI on the stack's /mcp with `apiKey` and `options`; its stdout parsed. */
async function inspect(apiKey: string, options: string[]): Promise<Record<string, any>> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      path.join(CLI_DIR, 'cli.js'),
      '--cli',
      `${testStack().baseUrl}/mcp`,
      '--transport',
      'http',
      '--header',
      `X-Api-Key: ${apiKey}`,
      ...options,
    ],
    // The CLI finds its own package.json by a path relative to the working directory: its build folder.
    // A full suite's stack holds hundreds of public agents: a first page of tools/list passes 1 MB.
    { cwd: CLI_DIR, timeout: CLI_TIMEOUT_MS, maxBuffer: 64 * 2 ** 20 },
  );
  return JSON.parse(stdout) as Record<string, any>;
}

describe("the MCP Inspector's CLI on /mcp", () => {
  const server = useAgentServer();

  it('lists an agent tool as {agent}.{tool}, and calls it as a task', async () => {
    const owner = (await newServiceKey()).key;
    // A private agent of a new service: the catalog it sees is the public agents and this one.
    // The CLI reads the first page of tools/list only (500 names in order): a name starting with a
    // digit comes before every other test's agents.
    const name = `0inspected ${randomUUID().slice(0, 6)}`;
    const agent = await registerAgent(
      {
        name,
        mcpUrl: server().route('inspector-forecast', completes({ sky: 'clear', city: 'Oslo' })),
        capabilities: { tools: [tool('forecast', { city: { type: 'string' } })] },
        visibility: 'private',
      },
      owner,
    );
    const toolName = `${name.replace(' ', '_')}.forecast`;

    const listed = await inspect(owner, ['--method', 'tools/list']);
    const names = (listed.tools as Array<{ name: string }>).map((each) => each.name);
    expect(names).toContain(toolName);

    const result = await inspect(owner, ['--method', 'tools/call', '--tool-name', toolName, '--tool-arg', 'city=Oslo']);
    expect(result).toMatchObject({
      structuredContent: { sky: 'clear', city: 'Oslo' },
      content: [{ type: 'text', text: '{"sky":"clear","city":"Oslo"}' }],
    });
    expect(result.isError).toBeFalsy();
    const task = await call('GET', `/tasks/${result._meta[META_TASK]}`, { apiKey: owner });
    expect(task.status).toBe(200);
    expect(task.body).toMatchObject({
      agentId: agent.agentId,
      operation: 'tools/forecast',
      status: 'completed',
      result: { sky: 'clear', city: 'Oslo' },
    });
    expect(server().callsTo('inspector-forecast').at(-1)?.body).toMatchObject({ params: { city: 'Oslo' } });
  });

  it('is refused without a valid key, as the contract says', async () => {
    await expect(inspect('not-a-key', ['--method', 'tools/list'])).rejects.toMatchObject({ code: 1 });
  });
});
