import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { useAgentServer, completes, type AgentBehaviour, accepts } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { call } from '../support/http';
import { newUserId } from '../support/humans';
import { createRoom, isError, RoomClient, useRoomClients } from '../support/room-client';
import { tool, waitForTask, reportOn } from '../support/tasks';
import { withTemporal } from '../support/temporal';

const agentServer = useAgentServer();
const connect = useRoomClients();

/** An agent whose mcpUrl is a route of the loopback agent server that completes with `{via: "http"}`. */
function registerLiveAgent(
  tools = [tool('echo', { text: { type: 'string' } })],
  overHttp: AgentBehaviour = completes({ via: 'http' }),
): Promise<RegisteredAgent> {
  const route = `agent-${randomUUID()}`;
  return registerAgent({ mcpUrl: agentServer().route(route, overHttp), capabilities: { tools } }).then((agent) => ({
    ...agent,
    route,
  }));
}

const roomWith = (...agents: RegisteredAgent[]) =>
  createRoom({ participants: agents.map((agent) => ({ type: 'AGENT', participantId: agent.agentId })) });

const isFrame = (type: string, taskId?: string) => (frame: any) =>
  frame.type === type && (taskId === undefined || frame.data.taskId === taskId);
const isTaskUpdate = (taskId: string) => (frame: any) =>
  frame.type === 'SYSTEM' && frame.data.event === 'task_update' && frame.data.taskId === taskId;
const isErrorFor = (requestId: string) => (frame: any) => isError(frame) && frame.data.requestId === requestId;

function requestTask(client: RoomClient, data: Record<string, unknown>): string {
  const requestId = randomUUID();
  client.send({ type: 'TASK_REQUEST', data: { requestId, ...data } });
  return requestId;
}

async function created(client: RoomClient, requestId: string): Promise<{ taskId: string; agentId: string }> {
  const frame = await client.waitFor(
    (candidate) => (candidate.type === 'TASK_CREATED' || isError(candidate)) && candidate.data.requestId === requestId,
  );
  expect(frame.type).toBe('TASK_CREATED');
  return frame.data;
}

/** A human's task for an agent connected to the room, delivered as a TASK frame. */
async function taskOverSocket({
  request = {},
  overHttp,
}: { request?: Record<string, unknown>; overHttp?: AgentBehaviour } = {}) {
  const agent = await registerLiveAgent(undefined, overHttp);
  const room = await roomWith(agent);
  const asker = await connect(room.roomId, { human: newUserId() });
  const agentSocket = await connect(room.roomId, { apiKey: agent.apiKey }, { joinedAs: agent.agentId });
  const { taskId } = await created(
    asker,
    requestTask(asker, { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' }, ...request }),
  );
  await agentSocket.waitFor(isFrame('TASK', taskId));
  return { agent, asker, agentSocket, taskId };
}

describe('a human asks for a task in a room', () => {
  it('reaches the connected agent as a TASK frame; its TASK_RESULT ends the task and the room hears task_update', async () => {
    const agent = await registerLiveAgent();
    const room = await roomWith(agent);
    const human = newUserId();
    const asker = await connect(room.roomId, { human });
    const agentSocket = await connect(room.roomId, { apiKey: agent.apiKey }, { joinedAs: agent.agentId });

    const requestId = requestTask(asker, { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'hi' } });
    const { taskId, agentId } = await created(asker, requestId);
    expect(agentId).toBe(agent.agentId);

    const task = await agentSocket.waitFor(isFrame('TASK', taskId));
    expect(task.data).toEqual({
      taskId,
      operation: 'tools/echo',
      params: { text: 'hi' },
      roomId: room.roomId,
      requestedBy: { type: 'HUMAN', id: human },
    });
    expect((await waitForTask(taskId, { until: (view) => view.phase === 'awaiting_agent_report' })).phase).toBe(
      'awaiting_agent_report',
    );

    agentSocket.send({ type: 'TASK_RESULT', data: { taskId, status: 'completed', result: { text: 'hi back' } } });
    const update = await asker.waitFor(isTaskUpdate(taskId));
    expect(update.data).toMatchObject({
      event: 'task_update',
      taskId,
      agentId: agent.agentId,
      status: 'completed',
      result: { text: 'hi back' },
    });
    await agentSocket.waitFor(isTaskUpdate(taskId));

    const view = await waitForTask(taskId);
    expect(view).toMatchObject({
      status: 'completed',
      result: { text: 'hi back' },
      roomId: room.roomId,
      requestedBy: { type: 'HUMAN', id: human },
    });
    expect(agentServer().callsTo(agent.route)).toHaveLength(0);
  });

  it('names every activity of its workflow with a summary the operator reads in the Web UI', async () => {
    const { agentSocket, asker, taskId } = await taskOverSocket();
    agentSocket.send({ type: 'TASK_RESULT', data: { taskId, status: 'completed', result: { text: 'done' } } });
    await asker.waitFor(isTaskUpdate(taskId));
    await withTemporal(async (client) => {
      const { events } = await client.workflow.getHandle(`task-${taskId}`).fetchHistory();
      const activities = (events ?? []).filter(
        (event) =>
          event.markerRecordedEventAttributes?.markerName === 'core_local_activity' ||
          event.activityTaskScheduledEventAttributes,
      );
      const summaries = activities.map((event) =>
        event.userMetadata?.summary ? defaultPayloadConverter.fromPayload(event.userMetadata.summary) : '(none)',
      );
      expect(summaries).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^find agent socket: /),
          expect.stringMatching(/^TASK frame: /),
          expect.stringMatching(/^find room sockets: /),
        ]),
      );
      expect(summaries).not.toContain('(none)');
    });
  });

  it('goes over HTTP to mcpUrl when the agent is not connected to the room', async () => {
    const agent = await registerLiveAgent();
    const room = await roomWith(agent);
    const asker = await connect(room.roomId, { human: newUserId() });

    const { taskId } = await created(
      asker,
      requestTask(asker, { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'by post' } }),
    );
    const update = await asker.waitFor(isTaskUpdate(taskId));
    expect(update.data).toMatchObject({ status: 'completed', result: { via: 'http' } });
    expect(
      agentServer()
        .callsTo(agent.route)
        .map((received) => received.body),
    ).toEqual([{ taskId, operation: 'tools/echo', params: { text: 'by post' } }]);
  });

  it("lets only the task's agent answer it", async () => {
    const { asker, agentSocket, taskId } = await taskOverSocket();

    asker.send({ type: 'TASK_RESULT', data: { taskId, status: 'completed', result: { forged: true } } });
    const refusal = await asker.waitFor(isError);
    expect(refusal.data.code).toBe('FORBIDDEN');
    expect((await call('GET', `/tasks/${taskId}`, { apiKey: 'admin' })).body.status).toBe('pending');

    agentSocket.send({
      type: 'TASK_RESULT',
      data: { taskId, status: 'failed', error: { code: 'NOPE', message: 'cannot' } },
    });
    expect((await asker.waitFor(isTaskUpdate(taskId))).data).toMatchObject({
      status: 'failed',
      error: { code: 'NOPE', message: 'cannot' },
    });
  });

  it('answers bad requests with ERROR frames carrying the contract codes and the requestId', async () => {
    const agent = await registerLiveAgent();
    const room = await roomWith(agent);
    const asker = await connect(room.roomId, { human: newUserId() });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ agentId: agent.agentId, params: {} }, 'VALIDATION_ERROR'],
      [{ agentId: agent.agentId, operation: 'tools/echo', params: { text: 7 } }, 'VALIDATION_ERROR'],
      [{ agentId: agent.agentId, operation: 'tools/missing', params: {} }, 'OPERATION_NOT_SUPPORTED'],
      [{ agentId: `no-such-${randomUUID()}`, operation: 'tools/echo', params: { text: 'x' } }, 'AGENT_NOT_FOUND'],
      [
        { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' }, parentTaskId: randomUUID() },
        'NOT_FOUND',
      ],
    ];
    for (const [data, code] of cases) {
      const requestId = requestTask(asker, data);
      expect((await asker.waitFor(isErrorFor(requestId))).data.code).toBe(code);
    }
    const hostile: Array<[unknown, string]> = [
      [{ type: 'TASK_RESULT', data: { status: 'completed' } }, 'VALIDATION_ERROR'],
      [{ type: 'TASK_RESULT', data: { taskId: randomUUID(), status: 'completed', result: 1 } }, 'NOT_FOUND'],
      [{ type: 'TASK_REQUEST', data: null }, 'VALIDATION_ERROR'],
      [{ type: 'TASK_REQUEST', data: [1, 2] }, 'VALIDATION_ERROR'],
      [{ type: 'TASK_REQUEST' }, 'VALIDATION_ERROR'],
    ];
    for (const [frame, code] of hostile) {
      const before = asker.frames.filter(isError).length;
      asker.send(frame);
      const errors = await asker.waitForCount(isError, before + 1);
      expect(errors[before].data.code).toBe(code);
    }
    expect(asker.ws.readyState).toBe(asker.ws.OPEN);
  });
});

describe('capability matching without agentId', () => {
  it('picks the participant agent whose capabilities include the operation and accept the params', async () => {
    const other = await registerLiveAgent([tool('translate', { text: { type: 'string' } })]);
    const strict = await registerLiveAgent([tool('echo', { count: { type: 'integer' } })]);
    const fitting = await registerLiveAgent();
    const room = await roomWith(other, strict, fitting);
    const asker = await connect(room.roomId, { human: newUserId() });

    const { taskId, agentId } = await created(
      asker,
      requestTask(asker, { operation: 'tools/echo', params: { text: 'match me' } }),
    );
    expect(agentId).toBe(fitting.agentId);
    expect((await asker.waitFor(isTaskUpdate(taskId))).data).toMatchObject({
      agentId: fitting.agentId,
      status: 'completed',
    });
  });

  it('answers an ERROR naming why when no participant agent fits', async () => {
    const other = await registerLiveAgent([tool('translate', { text: { type: 'string' } })]);
    const strict = await registerLiveAgent([tool('echo', { count: { type: 'integer' } })]);
    const room = await roomWith(other, strict);
    const asker = await connect(room.roomId, { human: newUserId() });

    const requestId = requestTask(asker, { operation: 'tools/echo', params: { text: 'nobody' } });
    const error = await asker.waitFor(isErrorFor(requestId));
    expect(error.data.code).toBe('AGENT_NOT_FOUND');
    expect(error.data.message).toContain(`${other.agentId}: Agent ${other.agentId} registered no tools/echo`);
    expect(error.data.message).toContain(`${strict.agentId}: params do not match its inputSchema`);
  });
});

describe('delegation', () => {
  it('runs a chain of two agents: the first delegates to the second with parentTaskId, then answers', async () => {
    const first = await registerLiveAgent([tool('plan', { goal: { type: 'string' } })]);
    const second = await registerLiveAgent();
    const room = await roomWith(first, second);
    const asker = await connect(room.roomId, { human: newUserId() });
    const firstSocket = await connect(room.roomId, { apiKey: first.apiKey }, { joinedAs: first.agentId });
    const secondSocket = await connect(room.roomId, { apiKey: second.apiKey }, { joinedAs: second.agentId });

    const { taskId: parentTaskId } = await created(
      asker,
      requestTask(asker, { agentId: first.agentId, operation: 'tools/plan', params: { goal: 'echo' } }),
    );
    await firstSocket.waitFor(isFrame('TASK', parentTaskId));

    // Without agentId: the matching skips the asker itself and finds the second agent.
    const { taskId: childTaskId, agentId } = await created(
      firstSocket,
      requestTask(firstSocket, { operation: 'tools/echo', params: { text: 'sub' }, parentTaskId }),
    );
    expect(agentId).toBe(second.agentId);
    const delegated = await secondSocket.waitFor(isFrame('TASK', childTaskId));
    expect(delegated.data.requestedBy).toEqual({ type: 'AGENT', id: first.agentId });
    secondSocket.send({
      type: 'TASK_RESULT',
      data: { taskId: childTaskId, status: 'completed', result: { text: 'sub done' } },
    });

    const childUpdate = await firstSocket.waitFor(isTaskUpdate(childTaskId));
    firstSocket.send({
      type: 'TASK_RESULT',
      data: { taskId: parentTaskId, status: 'completed', result: { child: childUpdate.data.result } },
    });
    expect((await asker.waitFor(isTaskUpdate(parentTaskId))).data).toMatchObject({
      status: 'completed',
      result: { child: { text: 'sub done' } },
    });

    expect(await waitForTask(childTaskId)).toMatchObject({
      status: 'completed',
      parentTaskId,
      requestedBy: { type: 'AGENT', id: first.agentId },
    });
  });

  it('refuses a delegation from a task the asker has nothing to do with, as from an unknown task', async () => {
    const agent = await registerLiveAgent();
    const stranger = await registerLiveAgent();
    const room = await roomWith(agent, stranger);
    const asker = await connect(room.roomId, { human: newUserId() });
    const strangerSocket = await connect(room.roomId, { apiKey: stranger.apiKey });
    const { taskId } = await created(
      asker,
      requestTask(asker, { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' } }),
    );

    const requestId = requestTask(strangerSocket, {
      agentId: agent.agentId,
      operation: 'tools/echo',
      params: { text: 'y' },
      parentTaskId: taskId,
    });
    // To the stranger the parent is unknown: the same answer as for a task that does not exist.
    expect((await strangerSocket.waitFor(isErrorFor(requestId))).data).toMatchObject({
      code: 'NOT_FOUND',
      message: `Task ${taskId} not found`,
    });
  });
});

describe('an agent that does not answer its TASK frame', () => {
  it('is called over HTTP once its socket to the room closed', async () => {
    const { agent, asker, agentSocket, taskId } = await taskOverSocket();
    await agentSocket.close();

    expect((await asker.waitFor(isTaskUpdate(taskId))).data).toMatchObject({
      status: 'completed',
      result: { via: 'http' },
    });
    expect(
      agentServer()
        .callsTo(agent.route)
        .map((received) => received.body.taskId),
    ).toEqual([taskId]);
  });

  it('may report over HTTP after the fallback call accepted the task', async () => {
    const { agent, asker, agentSocket, taskId } = await taskOverSocket({ overHttp: accepts });
    await agentSocket.close();
    await waitForTask(taskId, { until: () => agentServer().callsTo(agent.route).length > 0 });

    const report = await reportOn(taskId, agent.apiKey, { status: 'completed', result: { late: true } });
    expect(report.status).toBe(200);
    expect((await asker.waitFor(isTaskUpdate(taskId))).data).toMatchObject({
      status: 'completed',
      result: { late: true },
    });
  });

  it('fails at its timeout while the agent stays connected and silent, instead of waiting for ever', async () => {
    const { agent, asker, taskId } = await taskOverSocket({ request: { timeoutMs: 2_000 } });

    const update = await asker.waitFor(isTaskUpdate(taskId));
    expect(update.data).toMatchObject({ status: 'failed', error: { code: 'AGENT_TIMEOUT' } });
    expect(agentServer().callsTo(agent.route)).toHaveLength(0);
  });
});
