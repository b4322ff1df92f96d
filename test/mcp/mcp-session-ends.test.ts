import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { useMcpServer } from '../support/mcp-server';
import { startOwnService } from '../support/own-service';
import { startTask, waitForTask } from '../support/tasks';
import { until } from '../support/until';

function tools(server: McpServer): void {
  server.registerTool('echo', { description: 'Echoes', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
}

describe("the worker's kept MCP session of an agent", () => {
  const mcp = useMcpServer({ setup: tools });

  /** Registers an agent on the server, runs one task on it and returns the agent and the session the call was made in. */
  async function agentWithSession(): Promise<{ agentId: string; sessionId: string }> {
    const { agentId } = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
    const task = await waitForTask(await startTask({ agentId, operation: 'tools/echo', params: { text: agentId } }));
    expect(task.status).toBe('completed');
    // The tests of this file run one after the other: the last call is this agent's.
    const sessionId = mcp().callsOf('tools/call').at(-1)!.headers['mcp-session-id'] as string;
    expect(sessionId).toBeDefined();
    return { agentId, sessionId };
  }

  const ended = (sessionId: string) =>
    mcp().requests.some(
      (request) => request.httpMethod === 'DELETE' && request.headers['mcp-session-id'] === sessionId,
    );

  it('ends, with the session DELETE, when the agent is deleted', async () => {
    const { agentId, sessionId } = await agentWithSession();
    expect(ended(sessionId)).toBe(false);
    expect((await call('DELETE', `/agents/${agentId}`, { apiKey: 'admin' })).status).toBe(204);
    await until(() => ended(sessionId), "the deleted agent's session ended");
  });

  it('ends, with the session DELETE, when the worker that holds it stops', async () => {
    // A service of the test's own (API and worker, start.ts), stopped as an operator stops it: SIGTERM.
    // Its sessions are never idle long enough to end otherwise.
    const service = await startOwnService('mcp-sessions', { MCP_SESSION_IDLE_MS: String(24 * 3_600_000) });
    let sessionId: string | undefined;
    try {
      const { agentId } = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
      const started = await call('POST', '/tasks', {
        apiKey: 'admin',
        baseUrl: service.baseUrl,
        body: { agentId, operation: 'tools/echo', params: { text: 'before the stop' } },
      });
      expect(started.status).toBe(202);
      const task = await waitForTask(started.body.taskId as string, { baseUrl: service.baseUrl });
      expect(task).toMatchObject({ status: 'completed' });
      sessionId = mcp().callsOf('tools/call').at(-1)!.headers['mcp-session-id'] as string;
      expect(sessionId).toBeDefined();
      expect(ended(sessionId)).toBe(false);
    } finally {
      await service.stop();
    }
    // The worker ends its sessions before its process exits.
    expect(service.process.running).toBe(false);
    expect(ended(sessionId)).toBe(true);
  });

  it('ends, with the session DELETE, when the agent changes version', async () => {
    const { agentId, sessionId } = await agentWithSession();
    const changed = await call('PATCH', `/agents/${agentId}`, {
      apiKey: 'admin',
      body: { description: 'Echoes, changed' },
    });
    expect(changed.status).toBe(200);
    await until(() => ended(sessionId), "the changed agent's earlier session ended");
  });
});
