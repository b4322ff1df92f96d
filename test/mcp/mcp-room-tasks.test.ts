import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { registerAgent } from '../support/agents';
import { newUserId } from '../support/humans';
import { useMcpServer } from '../support/mcp-server';
import { createRoom, isError, useRoomClients } from '../support/room-client';
import { waitForTask } from '../support/tasks';

function tools(server: McpServer): void {
  server.registerTool('shout', { description: 'Upper-cases', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text: text.toUpperCase() }],
    structuredContent: { text: text.toUpperCase() },
  }));
}

describe('room tasks of an MCP agent', () => {
  const mcp = useMcpServer({ setup: tools });
  const connect = useRoomClients();

  it('go over MCP, not to a socket its key opened, and the room hears task_update with the result', async () => {
    const agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
    const room = await createRoom({ participants: [{ type: 'AGENT', participantId: agent.agentId }] });
    const asker = await connect(room.roomId, { human: newUserId() });
    const agentSocket = await connect(room.roomId, { apiKey: agent.apiKey });

    const requestId = randomUUID();
    asker.send({
      type: 'TASK_REQUEST',
      data: { requestId, agentId: agent.agentId, operation: 'tools/shout', params: { text: 'hello room' } },
    });
    const created = await asker.waitFor(
      (frame) => (frame.type === 'TASK_CREATED' || isError(frame)) && frame.data.requestId === requestId,
    );
    expect(created.type).toBe('TASK_CREATED');
    const { taskId } = created.data;

    const update = await asker.waitFor(
      (frame) => frame.type === 'SYSTEM' && frame.data.event === 'task_update' && frame.data.taskId === taskId,
    );
    expect(update.data).toMatchObject({
      taskId,
      agentId: agent.agentId,
      status: 'completed',
      result: { text: 'HELLO ROOM' },
    });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', roomId: room.roomId });
    expect(
      mcp()
        .callsOf('tools/call')
        .filter((request) => request.toolName === 'shout'),
    ).toHaveLength(1);
    expect(agentSocket.frames.some((frame: { type: string }) => frame.type === 'TASK')).toBe(false);
  });
});
