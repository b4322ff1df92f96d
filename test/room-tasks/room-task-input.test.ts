import { randomUUID } from 'node:crypto';
import { AgentServer, completes } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call, expectError } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';
import { createRoom, isError, RoomClient } from '../support/room-client';
import { tool, waitForTask } from '../support/tasks';

const FRAME_WAIT_MS = 10_000;
let agentServer: AgentServer;
const clients: RoomClient[] = [];

beforeAll(async () => {
  agentServer = await AgentServer.start();
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await agentServer.close();
});

async function connect(roomId: string, credential: Parameters<typeof RoomClient.connect>[1]): Promise<RoomClient> {
  const client = await RoomClient.connect(roomId, credential);
  clients.push(client);
  return client;
}

const isTaskUpdate = (taskId: string, status: string) => (frame: any) =>
  frame.type === 'SYSTEM' &&
  frame.data.event === 'task_update' &&
  frame.data.taskId === taskId &&
  frame.data.status === status;

const CONFIRMATION = {
  type: 'object',
  required: ['confirm'],
  properties: { confirm: { type: 'boolean' } },
};

describe('an input request of a task in a room', () => {
  it('is announced to the room, answered by another person over the room socket, and delivered to the agent as a TASK_INPUT frame', async () => {
    const agent: RegisteredAgent = await registerAgent({
      mcpUrl: agentServer.route(`agent-${randomUUID()}`, completes({ via: 'http' })),
      capabilities: { tools: [tool('echo', { text: { type: 'string' } })] },
    });
    const room = await createRoom({ participants: [{ type: 'AGENT', participantId: agent.agentId }] });
    const asker = await connect(room.roomId, { human: newUserId() });
    const colleague = await connect(room.roomId, { human: newUserId() });
    const agentSocket = await connect(room.roomId, { apiKey: agent.apiKey });

    const requestId = randomUUID();
    asker.send({
      type: 'TASK_REQUEST',
      data: { requestId, agentId: agent.agentId, operation: 'tools/echo', params: { text: 'wipe' } },
    });
    const created = await asker.waitFor(
      (frame) => frame.type === 'TASK_CREATED' && frame.data.requestId === requestId,
      FRAME_WAIT_MS,
    );
    const { taskId } = created.data;
    await agentSocket.waitFor((frame) => frame.type === 'TASK' && frame.data.taskId === taskId, FRAME_WAIT_MS);

    agentSocket.send({
      type: 'TASK_RESULT',
      data: { taskId, status: 'input-required', message: 'Wipe the disk?', inputSchema: CONFIRMATION },
    });
    const asked = await colleague.waitFor(isTaskUpdate(taskId, 'input-required'), FRAME_WAIT_MS);
    expect(asked.data).toMatchObject({
      roomId: room.roomId,
      agentId: agent.agentId,
      message: 'Wipe the disk?',
      inputSchema: CONFIRMATION,
    });
    const inputRequestId = asked.data.requestId as string;
    expect(
      (await waitForTask(taskId, { until: (task) => task.status === 'input-required' })).inputRequest,
    ).toMatchObject({ requestId: inputRequestId });

    // Someone outside the room may not answer over HTTP; a bad answer over the socket is an ERROR frame.
    const stranger = await humanHeaders(newUserId());
    expectError(
      await call('POST', `/tasks/${taskId}/input`, { headers: stranger, body: { input: { confirm: true } } }),
      404,
      'NOT_FOUND',
    );
    colleague.send({ type: 'TASK_INPUT', data: { taskId, input: { confirm: 'yes' } } });
    const refused = await colleague.waitFor(isError, FRAME_WAIT_MS);
    expect(refused.data.code).toBe('VALIDATION_ERROR');

    colleague.send({ type: 'TASK_INPUT', data: { taskId, requestId: inputRequestId, input: { confirm: true } } });
    const delivered = await agentSocket.waitFor(
      (frame) => frame.type === 'TASK_INPUT' && frame.data.taskId === taskId,
      FRAME_WAIT_MS,
    );
    expect(delivered.data).toEqual({ taskId, requestId: inputRequestId, input: { confirm: true } });
    const answered = await asker.waitFor(isTaskUpdate(taskId, 'pending'), FRAME_WAIT_MS);
    expect(answered.data).toMatchObject({ requestId: inputRequestId, input: { confirm: true } });

    agentSocket.send({ type: 'TASK_RESULT', data: { taskId, status: 'completed', result: { wiped: true } } });
    await asker.waitFor(isTaskUpdate(taskId, 'completed'), FRAME_WAIT_MS);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { wiped: true } });
    // The agent was never called over HTTP: the room socket carried the task and the answer.
    expect(agentServer.calls.filter((received) => received.body?.taskId === taskId)).toEqual([]);
  });
});
