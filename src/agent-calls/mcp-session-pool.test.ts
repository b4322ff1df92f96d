import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { McpTestServer } from '../../test/support/mcp-server';
import { until } from '../../test/support/until';
import { outboundDispatcher } from './outbound-guard';
import { McpSessionPool } from './mcp-session-pool';
import type { McpSession } from './mcp-session';

function tools(server: McpServer): void {
  server.registerTool('echo', { description: 'echo', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
}

const echo = (text: string) => async (session: McpSession) => {
  const result = await session.client.request(
    { method: 'tools/call', params: { name: 'echo', arguments: { text } } },
    CallToolResultSchema,
    session.requestOptions(),
  );
  return result.content[0];
};

describe('McpSessionPool: a kept MCP session per agent version', () => {
  let server: McpTestServer;
  let pool: McpSessionPool;

  beforeEach(async () => {
    server = await McpTestServer.start({ setup: tools });
    pool = new McpSessionPool({
      dispatcher: outboundDispatcher({ allowPrivate: true, connectTimeoutMs: 5_000 }),
      timeoutMs: 5_000,
      maxReplyBytes: 1024 * 1024,
      idleMs: 60_000,
    });
  });
  afterEach(async () => {
    await server.close();
  });

  const agent = (version = 1) => ({ id: 'agent-1', version, endpointUrl: server.url });

  it('makes the calls of one agent in one session, side by side', async () => {
    await pool.withSession(agent(), echo('first'));
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, n) => pool.withSession(agent(), echo(`then ${n}`))),
    );
    expect(answers.map((answer) => (answer as { text: string }).text)).toEqual([
      'then 0',
      'then 1',
      'then 2',
      'then 3',
      'then 4',
    ]);
    expect(server.callsOf('initialize')).toHaveLength(1);
    expect(server.callsOf('tools/call')).toHaveLength(6);
    expect(server.requests.filter((request) => request.httpMethod === 'DELETE')).toHaveLength(0);
  });

  it.each([404, 400])('opens the session again once when the server answers %i for it', async (status) => {
    await server.close();
    server = await McpTestServer.start({ setup: tools, unknownSessionStatus: status });
    await pool.withSession(agent(), echo('first'));
    const { headers } = server.callsOf('tools/call')[0];
    // The server ends the session on its side (as a restart or an expiry would).
    const ended = await fetch(server.url, {
      method: 'DELETE',
      headers: {
        'mcp-session-id': headers['mcp-session-id'] as string,
        'mcp-protocol-version': headers['mcp-protocol-version'] as string,
      },
    });
    expect(ended.status).toBe(200);
    await expect(pool.withSession(agent(), echo('again'))).resolves.toMatchObject({ text: 'again' });
    expect(server.callsOf('initialize')).toHaveLength(2);
  });

  it("ends the session of an agent's earlier version", async () => {
    await pool.withSession(agent(1), echo('one'));
    await pool.withSession(agent(2), echo('two'));
    await until(() => server.requests.some((request) => request.httpMethod === 'DELETE'), 'the old session ended');
    expect(server.callsOf('initialize')).toHaveLength(2);
  });

  const deletes = () => server.requests.filter((request) => request.httpMethod === 'DELETE');
  const sessionOfCalls = () => server.callsOf('tools/call')[0].headers['mcp-session-id'];

  it('ends a session no call used for idleMs, with the session DELETE', async () => {
    const idling = new McpSessionPool({
      dispatcher: outboundDispatcher({ allowPrivate: true, connectTimeoutMs: 5_000 }),
      timeoutMs: 5_000,
      maxReplyBytes: 1024 * 1024,
      idleMs: 100,
    });
    await idling.withSession(agent(), echo('then idle'));
    const [ended] = await until(() => deletes().length > 0 && deletes(), 'the idle session ended');
    expect(ended.headers['mcp-session-id']).toBe(sessionOfCalls());
  });

  it('ends the session of an agent that is deleted or changed, once the pool looks it up', async () => {
    let current = true;
    const checked = new McpSessionPool({
      dispatcher: outboundDispatcher({ allowPrivate: true, connectTimeoutMs: 5_000 }),
      timeoutMs: 5_000,
      maxReplyBytes: 1024 * 1024,
      idleMs: 60_000,
      isCurrent: (agentId, version) => Promise.resolve(agentId === 'agent-1' && version === 1 && current),
    });
    await checked.withSession(agent(), echo('before the change'));
    current = false;
    const [ended] = await until(() => deletes().length > 0 && deletes(), "the deleted agent's session ended");
    expect(ended.headers['mcp-session-id']).toBe(sessionOfCalls());
  });

  it('ends every session when it closes, and resolves once the server heard of it', async () => {
    await pool.withSession(agent(), echo('one'));
    await pool.close();
    expect(deletes().map((request) => request.headers['mcp-session-id'])).toEqual([sessionOfCalls()]);
  });
});
