import { useAgentServer, type AgentBehaviour } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { useEventStreams, type StreamedEvent } from '../support/event-stream';
import { call, expectError } from '../support/http';
import { reportOn, waitForTask } from '../support/tasks';

const ENDINGS = ['completed', 'failed', 'cancelled'];

/** Completes with the text it was given. */
const echoes: AgentBehaviour = (received) => ({
  status: 200,
  body: { status: 'completed', result: { text: received.body.params.text } },
});
/** Takes the task and reports later: the test reports for it. */
const takesIt: AgentBehaviour = () => ({ status: 202, body: { status: 'received' } });

describe('a composition event stream', () => {
  const server = useAgentServer();
  const openStream = useEventStreams();
  let quick: RegisteredAgent;
  let slow: RegisteredAgent;

  beforeAll(async () => {
    quick = await registerAgent({ mcpUrl: server().route('echoes', echoes) });
    slow = await registerAgent({ mcpUrl: server().route('takes-it', takesIt) });
  });

  /** root, two sides (the second one the slow agent's), and a join of both sides. */
  async function composeDiamond(): Promise<{ compositionId: string; taskIds: string[] }> {
    const task = (agentId: string, text: string, parents: string[] = []) => ({
      agentId,
      operation: 'tools/echo',
      params: { text },
      ...(parents.length > 0 ? { parents } : {}),
    });
    const reply = await call('POST', '/tasks/compose', {
      apiKey: 'admin',
      body: [
        task(quick.agentId, 'root'),
        task(quick.agentId, 'left', ['0']),
        task(slow.agentId, 'right', ['0']),
        task(quick.agentId, 'join', ['1', '2']),
      ],
    });
    expect(reply.status).toBe(202);
    return {
      compositionId: reply.body[0].compositionId,
      taskIds: reply.body.map((element: { taskId: string }) => element.taskId),
    };
  }

  const typesOf = (events: StreamedEvent[], taskId: string) =>
    events.filter((event) => event.data.taskId === taskId).map((event) => event.data.type);

  it('streams every task of a diamond in one order, ids <taskId>:<seq>, and closes after the last end', async () => {
    const { compositionId, taskIds } = await composeDiamond();
    const [root, left, right, join] = taskIds;
    const path = `/compositions/${compositionId}/events`;
    const stream = await openStream(path);
    const rightOnly = await openStream(`/tasks/${right}/events`);
    expect(stream.status).toBe(200);
    // The root runs first; without it nothing else of the diamond does.
    const rootTask = await waitForTask(root);
    expect({ status: rootTask.status, phase: rootTask.phase, attempts: rootTask.attempts }).toEqual({
      status: 'completed',
      phase: undefined,
      attempts: 1,
    });

    await stream.waitFor((events) =>
      events.some((event) => event.data.taskId === right && event.data.type === 'accepted'),
    );
    for (const message of ['one', 'two'])
      expect((await reportOn(right, slow.apiKey, { status: 'pending', message })).status).toBe(200);
    await stream.waitFor((events) => events.filter((event) => event.data.type === 'progress').length === 2);
    // The join waits for the right side, which has not ended.
    expect(typesOf(stream.events, join)).toEqual(['created']);
    expect((await reportOn(right, slow.apiKey, { status: 'completed', result: { text: 'right, later' } })).status).toBe(
      200,
    );
    await stream.closedWithin();

    const { events } = stream;
    for (const event of events) expect(event.id).toBe(`${event.data.taskId}:${event.data.seq}`);
    const seqs = events.map((event) => event.data.seq as number);
    expect(seqs).toEqual(Array.from({ length: events.length }, (_, index) => index + 1));
    expect(events.slice(0, 4).map((event) => [event.data.seq, event.data.type, event.data.taskId])).toEqual(
      taskIds.map((taskId, index) => [index + 1, 'created', taskId]),
    );
    for (const event of events.slice(0, 4))
      expect(event.data).toMatchObject({ compositionId, operation: 'tools/echo', agentId: expect.any(String) });
    expect(typesOf(events, root)).toEqual(['created', 'started', 'completed']);
    expect(typesOf(events, left)).toEqual(['created', 'started', 'completed']);
    expect(typesOf(events, right)).toEqual(['created', 'started', 'accepted', 'progress', 'progress', 'completed']);
    expect(typesOf(events, join)).toEqual(['created', 'started', 'completed']);
    // The stream ends with the last task's end; the join starts only after both sides ended.
    expect(events.at(-1)!.data).toMatchObject({ taskId: join, type: 'completed', result: { text: 'join' } });
    const seqOf = (taskId: string, type: string) =>
      events.find((event) => event.data.taskId === taskId && event.data.type === type)!.data.seq as number;
    expect(seqOf(join, 'started')).toBeGreaterThan(Math.max(seqOf(left, 'completed'), seqOf(right, 'completed')));
    expect(seqOf(left, 'started')).toBeGreaterThan(seqOf(root, 'completed'));
    expect(events.find((event) => event.data.taskId === right && event.data.type === 'completed')!.data).toMatchObject({
      result: { text: 'right, later' },
      attempts: 1,
    });

    const json = await call('GET', `${path}?format=json`, { apiKey: 'admin' });
    expect(json.status).toBe(200);
    expect(json.body).toEqual(stream.data);

    // Resuming from an event in the middle, by header or query: exactly the rest, then the close.
    const middle = events.findIndex((event) => event.data.type === 'progress');
    const resumed = await openStream(path, { lastEventId: events[middle].id });
    await resumed.closedWithin();
    expect(resumed.events).toEqual(events.slice(middle + 1));
    const resumedByQuery = await openStream(`${path}?after=${encodeURIComponent(events[middle].id!)}`);
    await resumedByQuery.closedWithin();
    expect(resumedByQuery.events).toEqual(events.slice(middle + 1));

    // One task's stream: its events only, with their seqs in the composition's log as ids.
    await rightOnly.closedWithin();
    const rightEvents = events.filter((event) => event.data.taskId === right);
    expect(rightOnly.data).toEqual(rightEvents.map((event) => event.data));
    expect(rightOnly.ids).toEqual(rightEvents.map((event) => String(event.data.seq)));
    const joinOnly = await call('GET', `/tasks/${join}/events?format=json`, { apiKey: 'admin' });
    expect(joinOnly.body).toEqual(events.filter((event) => event.data.taskId === join).map((event) => event.data));
    const joinResumed = await openStream(`/tasks/${join}/events`, { lastEventId: String(seqOf(join, 'started')) });
    await joinResumed.closedWithin();
    expect(joinResumed.data.map((event) => event.type)).toEqual(['completed']);
  });

  it('logs the events of many tasks running at once in one gapless order', async () => {
    const width = 8;
    const reply = await call('POST', '/tasks/compose', {
      apiKey: 'admin',
      body: Array.from({ length: width }, (_, index) => ({
        agentId: quick.agentId,
        operation: 'tools/echo',
        params: { text: `wide ${index}` },
      })),
    });
    expect(reply.status).toBe(202);
    const { compositionId } = reply.body[0];
    const taskIds: string[] = reply.body.map((element: { taskId: string }) => element.taskId);
    const stream = await openStream(`/compositions/${compositionId}/events`);
    const tasks = await Promise.all(taskIds.map((taskId) => waitForTask(taskId)));
    const closing = await stream.closedWithin().then(
      () => 'closed',
      (error: Error) => error.message,
    );
    expect({
      statuses: tasks.map((task) => task.status),
      closing,
      seqs: stream.data.map((event) => event.seq),
      perTask: taskIds.map((taskId) => typesOf(stream.events, taskId)),
    }).toEqual({
      statuses: taskIds.map(() => 'completed'),
      closing: 'closed',
      seqs: Array.from({ length: 3 * width }, (_, index) => index + 1),
      perTask: taskIds.map(() => ['created', 'started', 'completed']),
    });
  });

  it("shows the agent of one task the others' events without their data", async () => {
    const { compositionId, taskIds } = await composeDiamond();
    const [root, , right] = taskIds;
    const stream = await openStream(`/compositions/${compositionId}/events`, { apiKey: slow.apiKey });
    expect(stream.status).toBe(200);
    await stream.waitFor((events) =>
      events.some((event) => event.data.taskId === right && event.data.type === 'accepted'),
    );
    expect((await reportOn(right, slow.apiKey, { status: 'completed', result: { text: 'mine' } })).status).toBe(200);
    await stream.closedWithin();

    const asAdmin = await call('GET', `/compositions/${compositionId}/events?format=json`, { apiKey: 'admin' });
    expect(stream.data).toHaveLength(asAdmin.body.length);
    for (const [index, event] of stream.data.entries()) {
      const full = asAdmin.body[index];
      if (event.taskId === right) expect(event).toEqual(full);
      else expect(event).toEqual({ seq: full.seq, taskId: full.taskId, type: full.type, at: full.at });
    }
    expect(stream.data.filter((event) => ENDINGS.includes(event.type))).toHaveLength(4);
    // A task of the composition that is not its own stays unknown to it.
    expectError(await call('GET', `/tasks/${root}/events?format=json`, { apiKey: slow.apiKey }), 404, 'NOT_FOUND');
  });
});
