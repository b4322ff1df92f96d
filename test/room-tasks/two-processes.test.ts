import { randomUUID } from 'node:crypto';
import { AgentServer, completes } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { newUserId } from '../support/humans';
import { createRoom, isMessage, RoomClient } from '../support/room-client';
import { startSecondApi } from '../support/second-api';
import type { ServiceProcess } from '../support/service-process';
import { tool } from '../support/tasks';
import { STUCK_AFTER_MS, until } from '../support/until';

/** A second API process (no worker of the task queue) on the same Temporal and MongoDB. */
let second: ServiceProcess;
let secondWsUrl: string;
let agentServer: AgentServer;
const clients: RoomClient[] = [];
beforeAll(async () => {
  ({ process: second, wsUrl: secondWsUrl } = await startSecondApi('room-tasks-second'));
  agentServer = await AgentServer.start();
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await second?.stop();
  await agentServer?.close();
});

/** A client on the first or the second process; given `joinedAs`, once the room announced that participant joined. */
async function connect(
  roomId: string,
  credential: Parameters<typeof RoomClient.connect>[1],
  onSecond: boolean,
  joinedAs?: string,
): Promise<RoomClient> {
  const client = await RoomClient.connect(roomId, credential, {
    ...(onSecond ? { wsUrl: secondWsUrl } : {}),
    ...(joinedAs === undefined ? {} : { joinedAs }),
  });
  clients.push(client);
  return client;
}

const isTaskUpdate = (taskId: string) => (frame: any) =>
  frame.type === 'SYSTEM' && frame.data.event === 'task_update' && frame.data.taskId === taskId;

describe('two API processes', () => {
  it.each([
    ['requested on the first, agent on the second', false, true],
    ['requested on the second, agent on the first', true, false],
  ])(
    "deliver the TASK frame to the process holding the agent's socket (%s)",
    async (_name, askerOnSecond, agentOnSecond) => {
      const agent = await registerAgent({
        mcpUrl: agentServer.route(`agent-${randomUUID()}`, completes({ via: 'http' })),
        capabilities: { tools: [tool('echo', { text: { type: 'string' } })] },
      });
      const room = await createRoom({ participants: [{ type: 'AGENT', participantId: agent.agentId }] });
      const askerId = newUserId();
      const asker = await connect(room.roomId, { human: askerId }, askerOnSecond, askerId);
      // Announced once its process recorded the socket: from then on the TASK frame goes to that process.
      const agentSocket = await connect(room.roomId, { apiKey: agent.apiKey }, agentOnSecond, agent.agentId);

      const requestId = randomUUID();
      asker.send({
        type: 'TASK_REQUEST',
        data: { requestId, agentId: agent.agentId, operation: 'tools/echo', params: { text: 'across' } },
      });
      const createdFrame = await asker.waitFor((frame) => frame.data?.requestId === requestId);
      expect(createdFrame.type).toBe('TASK_CREATED');
      const { taskId } = createdFrame.data;

      const task = await agentSocket.waitFor((frame) => frame.type === 'TASK' && frame.data.taskId === taskId);
      expect(task.data).toMatchObject({ operation: 'tools/echo', params: { text: 'across' }, roomId: room.roomId });
      agentSocket.send({ type: 'TASK_RESULT', data: { taskId, status: 'completed', result: { via: 'socket' } } });

      expect((await asker.waitFor(isTaskUpdate(taskId))).data).toMatchObject({
        status: 'completed',
        result: { via: 'socket' },
      });
      await agentSocket.waitFor(isTaskUpdate(taskId));
    },
  );

  it('bring chat messages sent through one process to sockets on the other (poll mode on FerretDB)', async () => {
    const room = await createRoom();
    const [alice, bob] = [newUserId(), newUserId()];
    const here = await connect(room.roomId, { human: alice }, false);
    const there = await connect(room.roomId, { human: bob }, true);
    // The poll of a newly connected room starts at the room's last seq on its first round, so a
    // message sent before that round is not brought over: once one is, each way, the polls run.
    let warmUps = 0;
    const broughtOver = (from: RoomClient, to: RoomClient, sender: string) =>
      until(
        () => {
          const seen = (frame: any) =>
            isMessage()(frame) && frame.data.sender.id === sender && frame.data.content.startsWith('warm-up');
          if (to.frames.some(seen)) return true;
          from.sendMessage(`warm-up ${(warmUps += 1)}`);
          return false;
        },
        'a message brought over once the poll ran',
        STUCK_AFTER_MS,
        500,
      );
    await broughtOver(here, there, alice);
    await broughtOver(there, here, bob);

    for (let index = 0; index < 20; index++) {
      const content = `across-${index}`;
      here.sendMessage(content);
      await there.waitFor(isMessage(content));
      there.sendMessage(`back-${index}`);
      await here.waitFor(isMessage(`back-${index}`));
    }

    // Each side saw every message of the other, once.
    const contents = (client: RoomClient) => client.frames.filter(isMessage()).map((frame) => frame.data.content);
    expect(contents(there).filter((content: string) => content.startsWith('across-'))).toHaveLength(20);
    expect(new Set(contents(here)).size).toBe(contents(here).length);
  });
});
