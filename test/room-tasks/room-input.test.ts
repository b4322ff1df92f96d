import { randomUUID } from 'node:crypto';
import { useAgentServer, type AgentBehaviour } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call } from '../support/http';
import { humanHeaders, newUserId } from '../support/humans';
import { createRoom, isError, useRoomClients } from '../support/room-client';
import { reportOn, tool, waitForTask } from '../support/tasks';
import { until } from '../support/until';

const CONFIRMATION = {
  type: 'object',
  required: ['confirm'],
  additionalProperties: false,
  properties: { confirm: { type: 'boolean' } },
};

const agentServer = useAgentServer();
const connect = useRoomClients();

/** Over HTTP: 202 to a task, 200 to a delivered input. */
const acceptsOverHttp: AgentBehaviour = (received) =>
  received.body?.input !== undefined
    ? { status: 200, body: { taken: true } }
    : { status: 202, body: { status: 'received' } };

async function registerLiveAgent(): Promise<RegisteredAgent & { route: string }> {
  const route = `agent-${randomUUID()}`;
  const agent = await registerAgent({
    mcpUrl: agentServer().route(route, acceptsOverHttp),
    capabilities: { tools: [tool('delete', { what: { type: 'string' } })] },
  });
  return { ...agent, route };
}

const isFrame = (type: string, taskId: string) => (frame: any) => frame.type === type && frame.data.taskId === taskId;
const isTaskUpdate = (taskId: string, status: string) => (frame: any) =>
  frame.type === 'SYSTEM' &&
  frame.data.event === 'task_update' &&
  frame.data.taskId === taskId &&
  frame.data.status === status;

/**
 * A room with the agent and a person who did not ask (`participant`) as participants; the asker
 * (not a participant) requests a task there with a TASK_REQUEST.
 */
async function roomTask({ agentConnected }: { agentConnected: boolean }) {
  const agent = await registerLiveAgent();
  const participant = newUserId();
  const room = await createRoom({
    participants: [
      { type: 'AGENT', participantId: agent.agentId },
      { type: 'HUMAN', participantId: participant },
    ],
  });
  const asker = await connect(room.roomId, { human: newUserId() });
  const person = await connect(room.roomId, { human: participant });
  const agentSocket = agentConnected
    ? await connect(room.roomId, { apiKey: agent.apiKey }, { joinedAs: agent.agentId })
    : undefined;
  const requestId = randomUUID();
  asker.send({
    type: 'TASK_REQUEST',
    data: { requestId, agentId: agent.agentId, operation: 'tools/delete', params: { what: 'the drafts' } },
  });
  const created = await asker.waitFor(
    (frame) => (frame.type === 'TASK_CREATED' || isError(frame)) && frame.data.requestId === requestId,
  );
  expect(created.type).toBe('TASK_CREATED');
  const { taskId } = created.data as { taskId: string };
  return { agent, room, participant, asker, person, agentSocket, taskId };
}

describe('an input request in a room', () => {
  it('is announced to the room, answered by anyone connected to it over its socket, and delivered as a TASK_INPUT frame', async () => {
    const { agent, room, asker, agentSocket, taskId } = await roomTask({ agentConnected: true });
    // Connected to the public room, not listed among its participants.
    const passerby = await connect(room.roomId, { human: newUserId() });
    await agentSocket!.waitFor(isFrame('TASK', taskId));
    agentSocket!.send({
      type: 'TASK_RESULT',
      data: { taskId, status: 'input-required', message: 'Delete the drafts?', inputSchema: CONFIRMATION },
    });
    const asked = await passerby.waitFor(isTaskUpdate(taskId, 'input-required'));
    expect(asked.data).toMatchObject({
      agentId: agent.agentId,
      message: 'Delete the drafts?',
      inputSchema: CONFIRMATION,
    });
    const inputRequestId = asked.data.requestId as string;

    // Over HTTP, someone not listed may not answer; over the socket, a bad answer is an ERROR frame.
    const stranger = await humanHeaders(newUserId());
    expect(
      (await call('POST', `/tasks/${taskId}/input`, { headers: stranger, body: { input: { confirm: true } } })).status,
    ).toBe(404);
    passerby.send({ type: 'TASK_INPUT', data: { taskId, input: { confirm: 'yes' } } });
    expect((await passerby.waitFor(isError)).data.code).toBe('VALIDATION_ERROR');

    passerby.send({ type: 'TASK_INPUT', data: { taskId, requestId: inputRequestId, input: { confirm: true } } });
    const delivered = await agentSocket!.waitFor(isFrame('TASK_INPUT', taskId));
    expect(delivered.data).toEqual({ taskId, requestId: inputRequestId, input: { confirm: true } });
    const answered = await asker.waitFor(isTaskUpdate(taskId, 'pending'));
    expect(answered.data).toMatchObject({ requestId: inputRequestId, input: { confirm: true } });

    agentSocket!.send({ type: 'TASK_RESULT', data: { taskId, status: 'completed', result: { deleted: true } } });
    await asker.waitFor(isTaskUpdate(taskId, 'completed'));
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { deleted: true } });
    // The room socket carried the task and the answer: nothing went to the agent's mcpUrl.
    expect(agentServer().callsTo(agent.route)).toEqual([]);
  });

  it('of an agent reached over HTTP is answered by a participant over HTTP and delivered as a signed POST', async () => {
    const { agent, participant, person, taskId } = await roomTask({ agentConnected: false });
    await until(() => agentServer().callsTo(agent.route)[0], 'the task called over HTTP');
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });

    const asked = await reportOn(taskId, agent.apiKey, {
      status: 'input-required',
      message: 'Delete the drafts?',
      inputSchema: CONFIRMATION,
    });
    expect(asked.status).toBe(200);
    const { requestId } = asked.body as { requestId: string };
    expect((await person.waitFor(isTaskUpdate(taskId, 'input-required'))).data).toMatchObject({
      requestId,
      message: 'Delete the drafts?',
    });

    const answered = await call('POST', `/tasks/${taskId}/input`, {
      headers: await humanHeaders(participant),
      body: { input: { confirm: false }, requestId },
    });
    expect(answered).toMatchObject({ status: 200, body: { taskId, status: 'pending', requestId } });
    const delivered = await until(
      () =>
        agentServer()
          .callsTo(agent.route)
          .find((received) => received.body?.input !== undefined),
      'the input delivered over HTTP',
    );
    expect(delivered.body).toEqual({ taskId, operation: 'tools/delete', requestId, input: { confirm: false } });
    expect((await person.waitFor(isTaskUpdate(taskId, 'pending'))).data).toMatchObject({
      requestId,
      input: { confirm: false },
    });

    expect(
      (
        await reportOn(taskId, agent.apiKey, {
          status: 'failed',
          error: { code: 'NOT_CONFIRMED', message: 'kept the drafts' },
        })
      ).status,
    ).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'failed', error: { code: 'NOT_CONFIRMED' } });
    expect((await person.waitFor(isTaskUpdate(taskId, 'failed'))).data).toMatchObject({
      error: { code: 'NOT_CONFIRMED' },
    });
  });

  it('goes over the socket the agent opened after it took the task over HTTP', async () => {
    const { agent, room, participant, taskId } = await roomTask({ agentConnected: false });
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    const asked = await reportOn(taskId, agent.apiKey, { status: 'input-required', message: 'Which drafts?' });
    expect(asked.status).toBe(200);
    const agentSocket = await connect(room.roomId, { apiKey: agent.apiKey }, { joinedAs: agent.agentId });

    const answered = await call('POST', `/tasks/${taskId}/input`, {
      headers: await humanHeaders(participant),
      body: { input: ['old', 'older'] },
    });
    expect(answered.status).toBe(200);
    expect((await agentSocket.waitFor(isFrame('TASK_INPUT', taskId))).data).toEqual({
      taskId,
      requestId: asked.body.requestId,
      input: ['old', 'older'],
    });
    expect(
      agentServer()
        .callsTo(agent.route)
        .filter((received) => received.body?.input !== undefined),
    ).toEqual([]);
    agentSocket.send({ type: 'TASK_RESULT', data: { taskId, status: 'completed', result: { deleted: 2 } } });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { deleted: 2 } });
  });

  // The agent has the task (its TASK frame) and the answer (the POST to mcpUrl): calling it with the
  // task again would start over work it is doing, with no trace of the answer it was given.
  it('of an agent whose socket closed while it waited goes to its mcpUrl, and the task is not sent again', async () => {
    const { agent, person, agentSocket: connected, taskId } = await roomTask({ agentConnected: true });
    const agentSocket = connected!;
    await agentSocket.waitFor(isFrame('TASK', taskId));
    agentSocket.send({ type: 'TASK_RESULT', data: { taskId, status: 'input-required', message: 'Delete?' } });
    const { requestId } = (await person.waitFor(isTaskUpdate(taskId, 'input-required'))).data;
    await agentSocket.close();

    person.send({ type: 'TASK_INPUT', data: { taskId, input: 'yes' } });
    const delivered = await until(
      () =>
        agentServer()
          .callsTo(agent.route)
          .find((received) => received.body?.input !== undefined),
      'the input delivered over HTTP once the socket is gone',
    );
    expect(delivered.body).toEqual({ taskId, operation: 'tools/delete', requestId, input: 'yes' });
    await person.waitFor(isTaskUpdate(taskId, 'pending'));

    // Time for a call with the task, were there one, before the report ends the workflow.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const taskCalls = agentServer()
      .callsTo(agent.route)
      .filter((received) => received.body?.input === undefined);
    expect(taskCalls.map((received) => received.body)).toEqual([]);
    expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { deleted: 1 } })).status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed', result: { deleted: 1 } });
  });
});
