import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, connectToService, listTools } from '../../examples/mcp-client';
import { completes, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { tool } from '../support/tasks';
import { testStack } from '../support/test-stack';

/** examples/mcp-client.ts against the running service: the README's MCP step. */
describe('the example MCP client', () => {
  const server = useAgentServer();
  let client: Client;
  afterEach(() => client?.close());

  it('lists the tools of the agents it may see and calls one, which runs as a task', async () => {
    const name = `echo${randomUUID().slice(0, 6)}`;
    await registerAgent({
      name,
      mcpUrl: server().route('example-client', completes({ text: 'hello' })),
      capabilities: { tools: [tool('echo', { text: { type: 'string' } })] },
    });
    client = await connectToService({ serviceUrl: testStack().baseUrl, apiKey: testStack().adminKey });
    const names = (await listTools(client)).map((listed) => listed.name);
    expect(names).toEqual(expect.arrayContaining([`${name}.echo`, 'search_agents', 'run_composition', 'get_task']));
    const result = await callTool(client, `${name}.echo`, { text: 'hello' });
    expect(result.structuredContent).toEqual({ text: 'hello' });
    const taskId = result._meta?.['dev.agent-coordination-service/taskId'] as string;
    expect((await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body).toMatchObject({
      status: 'completed',
      operation: 'tools/echo',
    });
  });
});
