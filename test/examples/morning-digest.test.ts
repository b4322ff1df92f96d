import type http from 'node:http';
import { freePort } from '../../src/util/ports';
import { DIGEST_TOOLS, madeUpReports, PUBLISH_SCHEMA, startDigestAgent, type Doc } from '../../examples/digest-agent';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { documentedJsonBlocks, filledIn } from '../support/documented-bodies';
import { call } from '../support/http';
import { itemIdsOf } from '../support/maps';
import { createSchedule, deleteSchedule, readSchedule, untilRuns } from '../support/schedules';
import { composeTasks, waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';

/** 30 of the made-up reports, doc-499 among them: the one that mentions a recall. */
const WITH_A_RECALL = madeUpReports(500).slice(470);
/** 30 reports none of which mentions a recall. */
const QUIET = madeUpReports(30);

/** The worked example of docs/tasks.md, "A morning digest": its request bodies as written there. */
describe('the morning digest of docs/tasks.md, with the example digest agent', () => {
  let agent: RegisteredAgent;
  let server: http.Server;
  let corpus: Doc[] = WITH_A_RECALL;
  const [compositionBlock, scheduleBlock] = documentedJsonBlocks('tasks.md', 'A morning digest');

  beforeAll(async () => {
    const port = await freePort();
    agent = await registerAgent({ mcpUrl: `http://127.0.0.1:${port}/mcp`, capabilities: { tools: DIGEST_TOOLS } });
    server = await startDigestAgent({
      port,
      serviceUrl: testStack().baseUrl,
      apiKey: agent.apiKey,
      signingSecret: agent.signingSecret,
      corpus: () => corpus,
    });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const composition = () => filledIn(compositionBlock, { digest: agent.agentId });

  it('summarises every document found, and asks a person once a summary is flagged', async () => {
    corpus = WITH_A_RECALL;
    const [search, summaries, review] = (await composeTasks(composition())).taskIds;
    expect(await waitForTask(search)).toMatchObject({ status: 'completed', result: { hits: WITH_A_RECALL } });
    const map = await waitForTask(summaries);
    expect(map).toMatchObject({ status: 'completed', map: { total: 30, completed: 30, failed: 0, cancelled: 0 } });
    expect(map.result.results.map((summary: { id: string }) => summary.id)).toEqual(WITH_A_RECALL.map(({ id }) => id));
    expect(map.result.results.filter((summary: { flagged: boolean }) => summary.flagged)).toEqual([
      expect.objectContaining({ id: 'doc-499' }),
    ]);
    const lastItem = await call('GET', `/tasks/${itemIdsOf(summaries, 30)[29]}`, { apiKey: 'admin' });
    expect(lastItem.body).toMatchObject({ status: 'completed', result: { id: 'doc-499', flagged: true } });

    expect(await waitForTask(review, { until: (task) => task.status !== 'pending' })).toMatchObject({
      status: 'input-required',
      inputRequest: {
        message: '1 of 30 summaries are flagged (doc-499): publish the digest?',
        inputSchema: PUBLISH_SCHEMA,
      },
    });
    const answered = await call('POST', `/tasks/${review}/input`, {
      apiKey: 'admin',
      body: { input: { publish: true } },
    });
    expect(answered.status).toBe(200);
    expect(await waitForTask(review)).toMatchObject({
      status: 'completed',
      result: { published: true, flagged: ['doc-499'] },
    });
  });

  it('runs every morning at 7 as a schedule: a morning without a flagged summary asks nobody', async () => {
    corpus = QUIET;
    const body = filledIn(scheduleBlock, { 'the composition above': JSON.stringify(composition()) });
    const { scheduleId } = await createSchedule(body);
    try {
      const schedule = await readSchedule(scheduleId);
      expect(schedule.spec).toMatchObject({ cron: '0 7 * * *', timezone: 'Europe/Oslo' });
      expect(schedule.nextRuns.length).toBeGreaterThan(0);
      expect((await call('POST', `/schedules/${scheduleId}/trigger`, { apiKey: 'admin' })).status).toBe(202);
      const [run] = await untilRuns(scheduleId, 1);
      const [, summaries, review] = run.taskIds!;
      expect(await waitForTask(summaries)).toMatchObject({ status: 'completed', map: { total: 30, completed: 30 } });
      expect(await waitForTask(review)).toMatchObject({ status: 'skipped', skipReason: { code: 'CONDITION_NOT_MET' } });
    } finally {
      await deleteSchedule(scheduleId);
    }
  });
});
