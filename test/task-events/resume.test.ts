import { accepts, useAgentServer } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { useEventStreams, type EventStreamReader } from '../support/event-stream';
import { call } from '../support/http';
import { reportOn, startTask } from '../support/tasks';

/** Progress reports in each of three phases: around the cut, before the reconnect, after it. */
const REPORTS_PER_PHASE = 70;
const PROGRESS_REPORTS = 3 * REPORTS_PER_PHASE;
/** created, started, accepted, the progress reports, completed: more than one page (200 seqs) of the log. */
const EVENT_COUNT = 3 + PROGRESS_REPORTS + 1;
const seqsFrom = (first: number, last: number) => Array.from({ length: last - first + 1 }, (_, index) => first + index);
const seqsOf = (reader: EventStreamReader) => reader.ids.map(Number);

describe('resuming a task event stream', () => {
  const server = useAgentServer();
  const openStream = useEventStreams();
  let agent: RegisteredAgent;

  beforeAll(async () => {
    agent = await registerAgent({ mcpUrl: server().route('takes-it', accepts) });
  });

  async function reportProgress(taskId: string, step: number): Promise<void> {
    const reply = await reportOn(taskId, agent.apiKey, {
      status: 'pending',
      progress: step / PROGRESS_REPORTS,
      message: `step ${step}`,
    });
    expect({ step, status: reply.status }).toEqual({ step, status: 200 });
  }

  it('gives every event exactly once across a cut and a reconnect with Last-Event-ID or ?after=', async () => {
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'long run' } });
    const path = `/tasks/${taskId}/events`;
    const first = await openStream(path);
    await first.waitFor((events) => events.some((event) => event.data.type === 'accepted'));

    // The cut comes while the reports go on, so events may be on their way when it does.
    const reporting = (async () => {
      for (let step = 1; step <= 2 * REPORTS_PER_PHASE; step += 1) await reportProgress(taskId, step);
    })();
    reporting.catch(() => undefined);
    await first.waitFor((events) => events.length >= 3 + REPORTS_PER_PHASE / 2);
    first.disconnect();
    await first.closed;
    await reporting;
    expect(first.endedByServer).toBe(false);
    const lastSeen = first.ids.at(-1)!;
    const firstSeqs = seqsOf(first);
    expect(firstSeqs).toEqual(seqsFrom(1, firstSeqs.length));
    expect(firstSeqs.length).toBeLessThan(3 + 2 * REPORTS_PER_PHASE);
    const byHeader = await openStream(path, { lastEventId: lastSeen });
    const byQuery = await openStream(`${path}?after=${lastSeen}`);
    for (let step = 2 * REPORTS_PER_PHASE + 1; step <= PROGRESS_REPORTS; step += 1) await reportProgress(taskId, step);
    expect(
      (await reportOn(taskId, agent.apiKey, { status: 'completed', result: { steps: PROGRESS_REPORTS } })).status,
    ).toBe(200);
    await byHeader.closedWithin();
    await byQuery.closedWithin();

    // Both streams of the log: from the first seq after the one last seen, to the end, each once.
    expect(seqsOf(byHeader)).toEqual(seqsFrom(firstSeqs.length + 1, EVENT_COUNT));
    expect(byQuery.events).toEqual(byHeader.events);
    const union = [...first.data, ...byHeader.data];
    expect(union.map((event) => event.seq)).toEqual(seqsFrom(1, EVENT_COUNT));
    expect([...first.ids, ...byHeader.ids]).toEqual(union.map((event) => String(event.seq)));
    expect(union.map((event) => event.type)).toEqual([
      'created',
      'started',
      'accepted',
      ...Array<string>(PROGRESS_REPORTS).fill('progress'),
      'completed',
    ]);
    expect(union.filter((event) => event.type === 'progress').map((event) => event.message)).toEqual(
      seqsFrom(1, PROGRESS_REPORTS).map((step) => `step ${step}`),
    );
    expect(union.at(-1)).toMatchObject({ taskId, type: 'completed', result: { steps: PROGRESS_REPORTS } });
    for (const event of union) expect(event.taskId).toBe(taskId);

    const json = await call('GET', `${path}?format=json`, { apiKey: 'admin' });
    expect(json.status).toBe(200);
    expect(json.body).toEqual(union);
  });

  it('replays an ended log from ?after=, which wins over Last-Event-ID, and closes', async () => {
    const taskId = await startTask({ agentId: agent.agentId, operation: 'tools/echo', params: { text: 'short run' } });
    const path = `/tasks/${taskId}/events`;
    const live = await openStream(path);
    await live.waitFor((events) => events.some((event) => event.data.type === 'accepted'));
    for (let step = 1; step <= 5; step += 1) await reportProgress(taskId, step);
    expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: {} })).status).toBe(200);
    await live.closedWithin();
    expect(seqsOf(live)).toEqual(seqsFrom(1, 9));

    const fromFour = await openStream(`${path}?after=4`, { lastEventId: '7' });
    await fromFour.closedWithin();
    expect(fromFour.events).toEqual(live.events.slice(4));

    const fromHeader = await openStream(path, { lastEventId: '7' });
    await fromHeader.closedWithin();
    expect(fromHeader.events).toEqual(live.events.slice(7));

    // Resuming after the last event: nothing more comes, and the stream closes.
    const afterEnd = await openStream(path, { lastEventId: '9' });
    await afterEnd.closedWithin();
    expect(afterEnd.events).toEqual([]);

    const json = await call('GET', `${path}?format=json&after=6`, { apiKey: 'admin' });
    expect(json.status).toBe(200);
    expect(json.body).toEqual(live.data.slice(6));
  });
});
