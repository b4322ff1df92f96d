import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { resources, tracing } from '@opentelemetry/sdk-node';
import { Worker, type ReplayResult } from '@temporalio/worker';
import { useAgentServer, type AgentBehaviour } from '../support/agent-server';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { createSchedule, deleteSchedule, untilRuns } from '../support/schedules';
import { call } from '../support/http';
import { newUserId } from '../support/humans';
import { createRoom, RoomClient } from '../support/room-client';
import { tool, waitForTask, reportOn } from '../support/tasks';
import { registerTaskTool, useMcpServer } from '../support/mcp-server';
import { useA2aAgent } from '../support/a2a-agent';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { waitForItem } from '../support/maps';
import { itemTaskId, workflowIdOfMap, workflowIdOfMapChunk } from '../../workflows/task-types';

/**
 * Histories of runs that earlier versions of the service started. A workflow change that one of
 * them could no longer replay would strand such a run, still open, at an upgrade: guard the change
 * with `patched()` instead. RECORD_HISTORIES=<version> records the scenarios below into a folder of
 * that name here.
 */
const RECORDED = path.resolve(__dirname, '../fixtures/histories');

/** Answers as `params.reply` says: completed with the params, 503 to the first call of a tag, 202, or refused. */
function scripted(): AgentBehaviour {
  const tagsCalled = new Set<string>();
  return (received) => {
    if (received.body.cancel || received.body.input !== undefined) return { status: 200, body: {} };
    const { reply, tag } = received.body.params;
    const firstCall = !tagsCalled.has(tag);
    tagsCalled.add(tag);
    if (reply === 'unavailable-once' && firstCall) return { status: 503, body: 'try again' };
    if (reply === 'accept') return { status: 202, body: { status: 'pending' } };
    if (reply === 'refuse')
      return { status: 422, body: { error: { code: 'VALIDATION_ERROR', message: 'refused by the test agent' } } };
    return { status: 200, body: { status: 'completed', result: received.body.params } };
  };
}

const { History } = temporal.api.history.v1;
type RecordedHistory = { workflowId: string; history: temporal.api.history.v1.IHistory };
/** Kept as protobuf's JSON form: int64 as text, enums by name, payloads' bytes in base64. */
const historyText = (history: RecordedHistory['history']): string =>
  JSON.stringify(
    History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String }),
    null,
    1,
  );
const historyOf = (text: string) => History.fromObject(JSON.parse(text));

/** The workflow bundle as a worker with tracing on has it (src/service/task-worker.ts), its spans kept in memory. */
const TRACED = {
  interceptors: { workflowModules: [require.resolve('../../workflows/tracing-interceptors')] },
  sinks: {
    exporter: makeWorkflowExporter(
      new tracing.SimpleSpanProcessor(new tracing.InMemorySpanExporter()),
      new resources.Resource({}),
    ),
  },
};

const replayAll = async (histories: RecordedHistory[], options: object = {}): Promise<ReplayResult[]> => {
  const results: ReplayResult[] = [];
  for await (const result of Worker.runReplayHistories(
    { workflowsPath: require.resolve('../../workflows'), replayName: 'replay-test', ...options },
    histories,
  ))
    results.push(result);
  return results;
};

/** Every history recorded under test/fixtures/histories, named `<version>/<scenario>`. */
const recordedHistories = (): RecordedHistory[] =>
  fs.readdirSync(RECORDED).flatMap((version) =>
    fs.readdirSync(path.join(RECORDED, version)).map((file) => ({
      workflowId: `${version}/${path.basename(file, '.json')}`,
      history: historyOf(fs.readFileSync(path.join(RECORDED, version, file), 'utf8')),
    })),
  );

const failuresOf = (results: ReplayResult[]) =>
  results
    .filter((result) => result.error !== undefined)
    .map((result) => `${result.workflowId}: ${result.error?.message}`);

/** An MCP server with a tool answered at once and one run as an MCP task that ends after a few polls, or never. */
function mcpTools(mcp: McpServer): void {
  mcp.registerTool('script', { description: 'Answers at once', inputSchema: { tag: z.string() } }, ({ tag }) => ({
    content: [{ type: 'text', text: tag }],
  }));
  registerTaskTool(mcp, 'long', { endless: z.boolean() }, (taskId, store, { endless }) => {
    if (!endless) setTimeout(() => void store.storeTaskResult(taskId, 'completed', { content: [] }), 1_200);
  });
}

describe('workflow replay', () => {
  const server = useAgentServer();
  const mcpServer = useMcpServer({ setup: mcpTools });
  const a2aServer = useA2aAgent({
    long: 'works-then-completes',
    endless: 'works-until-cancelled',
    colour: 'asks-for-input',
  });
  const pushingA2aServer = useA2aAgent({ long: 'works-then-completes' }, { pushNotifications: true });
  let agent: RegisteredAgent;
  let mcpAgent: RegisteredAgent;
  let a2aAgent: RegisteredAgent;
  let pushingA2aAgent: RegisteredAgent;
  const client = useTemporalClient();

  beforeAll(async () => {
    agent = await registerAgent({
      mcpUrl: server().route('scripted', scripted()),
      capabilities: { tools: [{ ...tool('script'), inputSchema: { type: 'object' } }] },
    });
    mcpAgent = await registerAgent({ protocol: 'mcp', mcpUrl: mcpServer().url, capabilities: undefined });
    a2aAgent = await registerAgent({ protocol: 'a2a', mcpUrl: a2aServer().cardUrl, capabilities: undefined });
    pushingA2aAgent = await registerAgent({
      protocol: 'a2a',
      mcpUrl: pushingA2aServer().cardUrl,
      capabilities: undefined,
    });
  });

  const task = (tag: string, reply: string, extra: Record<string, unknown> = {}) => ({
    agentId: agent.agentId,
    operation: 'tools/script',
    params: { tag, reply },
    ...extra,
  });
  const fast = { retry: { initialIntervalMs: 100, maxIntervalMs: 100 } };

  /** Runs each kind of task the service starts, and returns each workflow's history once it closed. */
  async function runScenarios(): Promise<RecordedHistory[]> {
    const workflowIds: Record<string, string> = {};
    const single = async (name: string, body: Record<string, unknown>, then?: (taskId: string) => Promise<void>) => {
      const reply = await call('POST', '/tasks', { apiKey: 'admin', body });
      expect(reply.status).toBe(202);
      await then?.(reply.body.taskId);
      workflowIds[name] = `task-${reply.body.taskId}`;
      return waitForTask(reply.body.taskId);
    };
    const composition = async (name: string, body: unknown[]) => {
      const reply = await call('POST', '/tasks/compose', { apiKey: 'admin', body });
      expect(reply.status).toBe(202);
      workflowIds[name] = `composition-${reply.body[0].compositionId}`;
      return Promise.all(reply.body.map((element: { taskId: string }) => waitForTask(element.taskId)));
    };
    /** A human asks for the task in a room: the agent's socket there answers it, or without one the agent is called over HTTP. */
    const inRoom = async (name: string, tag: string, withAgentSocket: boolean) => {
      const room = await createRoom({ participants: [{ type: 'AGENT', participantId: agent.agentId }] });
      const askerId = newUserId();
      const asker = await RoomClient.connect(room.roomId, { human: askerId }, { joinedAs: askerId });
      const agentSocket = withAgentSocket
        ? await RoomClient.connect(room.roomId, { apiKey: agent.apiKey }, { joinedAs: agent.agentId })
        : undefined;
      try {
        const requestId = randomUUID();
        asker.send({
          type: 'TASK_REQUEST',
          data: { requestId, agentId: agent.agentId, operation: 'tools/script', params: { tag, reply: 'complete' } },
        });
        const created = await asker.waitFor(
          (frame) => frame.type === 'TASK_CREATED' && frame.data.requestId === requestId,
        );
        const { taskId } = created.data;
        workflowIds[name] = `task-${taskId}`;
        if (agentSocket) {
          await agentSocket.waitFor((frame) => frame.type === 'TASK' && frame.data.taskId === taskId);
          agentSocket.send({ type: 'TASK_RESULT', data: { taskId, status: 'completed', result: { via: 'socket' } } });
        }
        await asker.waitFor(
          (frame) => frame.type === 'SYSTEM' && frame.data.event === 'task_update' && frame.data.taskId === taskId,
        );
        return waitForTask(taskId);
      } finally {
        await Promise.all([asker.close(), agentSocket?.close()]);
      }
    };
    const untilAwaitingReport = (taskId: string) =>
      waitForTask(taskId, { until: (seen) => seen.phase === 'awaiting_agent_report' }).then(() => undefined);

    const outcomes = await Promise.all([
      single('completed', task('completed', 'complete')),
      single('retried', task('retried', 'unavailable-once', fast)),
      single('reported', task('reported', 'accept'), async (taskId) => {
        await untilAwaitingReport(taskId);
        expect((await reportOn(taskId, 'admin', { status: 'completed', result: { reported: true } })).status).toBe(200);
      }),
      single('cancelled', task('cancelled', 'accept'), async (taskId) => {
        await untilAwaitingReport(taskId);
        expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
      }),
      single('refused', task('refused', 'refuse')),
      single('input', task('input', 'accept'), async (taskId) => {
        await untilAwaitingReport(taskId);
        const asked = await reportOn(taskId, 'admin', { status: 'input-required', message: 'Go on?' });
        expect(asked.status).toBe(200);
        const answered = await call('POST', `/tasks/${taskId}/input`, {
          apiKey: 'admin',
          body: { input: { go: true } },
        });
        expect(answered.status).toBe(200);
        await until(
          () =>
            server()
              .callsTo('scripted')
              .some((received) => received.body.input !== undefined),
          'input delivered',
        );
        expect((await reportOn(taskId, 'admin', { status: 'completed', result: { asked: true } })).status).toBe(200);
      }),
      single(
        'callback',
        task('callback', 'complete', {
          callbackUrl: server().route('callback-receiver', () => ({ status: 200, body: {} })),
        }),
      ),
      single('mcp-tool', { agentId: mcpAgent.agentId, operation: 'tools/script', params: { tag: 'mcp' } }),
      single('mcp-task', { agentId: mcpAgent.agentId, operation: 'tools/long', params: { endless: false } }),
      single(
        'mcp-task-cancelled',
        { agentId: mcpAgent.agentId, operation: 'tools/long', params: { endless: true } },
        async (taskId) => {
          await untilAwaitingReport(taskId);
          expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
        },
      ),
      single('a2a-task', { agentId: a2aAgent.agentId, operation: 'tools/long', params: {} }, async (taskId) => {
        await untilAwaitingReport(taskId);
        a2aServer().finish(await until(() => a2aServer().taskFor(taskId), "the A2A agent's task"));
      }),
      single(
        'a2a-task-cancelled',
        { agentId: a2aAgent.agentId, operation: 'tools/endless', params: {} },
        async (taskId) => {
          await untilAwaitingReport(taskId);
          expect((await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' })).status).toBe(200);
        },
      ),
      inRoom('room-socket', 'room-socket', true),
      inRoom('room-http', 'room-http', false),
      composition('diamond', [
        task('diamond', 'complete'),
        task('diamond', 'complete', {
          params: { tag: { source: { taskId: '0', field: 'tag' }, type: 'string' }, reply: 'complete' },
          parents: ['0'],
        }),
        task('diamond', 'refuse', { parents: ['0'] }),
        task('diamond', 'complete', { parents: ['1', '2'] }),
      ]),
      composition('pointer', [
        task('pointer', 'complete'),
        task('pointer', 'complete', {
          params: { tag: { source: { taskId: '0', field: '/tag' }, type: 'string' }, reply: 'complete' },
          parents: ['0'],
        }),
      ]),
      single(
        'a2a-task-pushed',
        { agentId: pushingA2aAgent.agentId, operation: 'tools/long', params: {} },
        async (taskId) => {
          await untilAwaitingReport(taskId);
          pushingA2aServer().finish(await until(() => pushingA2aServer().taskFor(taskId), "the A2A agent's task"));
        },
      ),
      // The answer wakes the run's poll of the agent (the inputAnswered signal).
      single('a2a-input', { agentId: a2aAgent.agentId, operation: 'tools/colour', params: {} }, async (taskId) => {
        await waitForTask(taskId, { until: (waiting) => waiting.status === 'input-required' });
        const answered = await call('POST', `/tasks/${taskId}/input`, {
          apiKey: 'admin',
          body: { input: { colour: 'green' } },
        });
        expect(answered.status).toBe(200);
      }),
      // A condition that holds, one that fails, a dependant of the skipped task, and one that runs anyway.
      composition('condition', [
        task('condition', 'complete'),
        task('condition', 'complete', { parents: ['0'], when: { source: { taskId: '0', field: 'tag' }, schema: {} } }),
        task('condition', 'complete', {
          parents: ['0'],
          when: { source: { taskId: '0', field: '/reply' }, schema: { const: 'refuse' } },
        }),
        task('condition', 'complete', { parents: ['2'] }),
        task('condition', 'complete', { parents: ['2'], runIfParentSkipped: true }),
      ]),
      // Levels without conditions or pending arguments: each dependant's call sets its phase.
      composition('layers', [
        task('layers', 'complete'),
        task('layers', 'complete', { parents: ['0'] }),
        task('layers', 'unavailable-once', { ...fast, parents: ['0'] }),
        task('layers', 'complete', { parents: ['1', '2'] }),
      ]),
    ]);
    expect(outcomes.flat().map((outcome) => outcome.status)).toEqual([
      'completed',
      'completed',
      'completed',
      'cancelled',
      'failed',
      'completed',
      'completed',
      'completed',
      'completed',
      'cancelled',
      'completed',
      'cancelled',
      'completed',
      'completed',
      'completed',
      'completed',
      'failed',
      'failed',
      'completed',
      'completed',
      'completed',
      'completed',
      'completed',
      'completed',
      'skipped',
      'skipped',
      'completed',
      'completed',
      'completed',
      'completed',
      'completed',
    ]);
    expect(outcomes.slice(10, 12).map((outcome) => outcome.status)).toEqual(['completed', 'cancelled']);
    expect(outcomes.slice(12, 14).map((outcome) => outcome.result)).toEqual([
      { via: 'socket' },
      { tag: 'room-http', reply: 'complete' },
    ]);

    /** A schedule's run, triggered: one that launches its task, or one refused because its agent was deleted. */
    const scheduled = async (name: string, agentId: string, beforeTrigger?: () => Promise<void>) => {
      const { scheduleId } = await createSchedule({
        spec: { cron: '0 7 * * *' },
        paused: true,
        action: { task: { agentId, operation: 'tools/script', params: { tag: name, reply: 'complete' } } },
      });
      await beforeTrigger?.();
      expect((await call('POST', `/schedules/${scheduleId}/trigger`, { apiKey: 'admin' })).status).toBe(202);
      const [run] = await untilRuns(scheduleId, 1);
      await deleteSchedule(scheduleId);
      workflowIds[name] = run.runId;
      return run;
    };
    const launched = await scheduled('scheduled-run', agent.agentId);
    expect((await waitForTask(launched.taskId!)).status).toBe('completed');
    const doomed = await registerAgent({
      mcpUrl: server().route('scripted-doomed', scripted()),
      capabilities: { tools: [{ ...tool('script'), inputSchema: { type: 'object' } }] },
    });
    const refused = await scheduled('scheduled-run-refused', doomed.agentId, async () => {
      expect((await call('DELETE', `/agents/${doomed.agentId}`, { apiKey: 'admin' })).status).toBe(204);
    });
    expect(refused.error?.code).toBe('AGENT_NOT_FOUND');

    /**
     * A map over `hits` of its parent, items running one at a time so that `during` sees them in
     * order, and a dependant reading its results; the composition's, the map's and its chunk's
     * workflows recorded under `name`.
     */
    const mapped = async (
      name: string,
      hits: Array<{ tag: string; reply: string }>,
      onItemFailure: 'fail' | 'continue',
      during?: (itemIds: string[]) => Promise<void>,
    ) => {
      const itemParam = (field: string) => ({ source: { item: true, field } });
      const reply = await call('POST', '/tasks/compose', {
        apiKey: 'admin',
        body: [
          { ...task(name, 'complete'), params: { tag: name, reply: 'complete', hits } },
          task(name, 'complete', {
            parents: ['0'],
            params: { tag: itemParam('tag'), reply: itemParam('reply') },
            forEach: { source: { taskId: '0', field: 'hits' }, maxConcurrency: 1, onItemFailure },
          }),
          task(name, 'complete', {
            parents: ['1'],
            params: { tag: name, reply: 'complete', results: { source: { taskId: '1', field: 'results' } } },
            executeOnParentFailure: true,
          }),
        ],
      });
      expect(reply.status).toBe(202);
      const mapTaskId: string = reply.body[1].taskId;
      const itemIds = hits.map((_hit, index) => itemTaskId(mapTaskId, index));
      await during?.(itemIds);
      workflowIds[name] = `composition-${reply.body[0].compositionId}`;
      const map = await waitForTask(mapTaskId);
      workflowIds[`${name}.map`] = workflowIdOfMap(mapTaskId);
      // One chunk: a map of at most 8 items (workflows/map-plan.ts).
      if (hits.length > 0) workflowIds[`${name}.chunk`] = workflowIdOfMapChunk(mapTaskId, 0, hits.length - 1);
      await Promise.all(reply.body.map((element: { taskId: string }) => waitForTask(element.taskId)));
      return map;
    };
    const item = (tag: string, reply: string) => ({ tag, reply });
    const [continued, reportedAndCancelled, empty, failed] = await Promise.all([
      mapped('map-continue', [item('map-continue', 'complete'), item('map-continue', 'refuse')], 'continue'),
      mapped(
        'map-report-cancel',
        [item('map-report-cancel', 'accept'), item('map-report-cancel', 'accept'), item('map-report', 'complete')],
        'continue',
        async ([reported, cancelled]) => {
          const awaitingReport = (seen: { phase?: string }) => seen.phase === 'awaiting_agent_report';
          await waitForItem(reported, { until: awaitingReport });
          expect((await reportOn(reported, 'admin', { status: 'completed', result: { reported: true } })).status).toBe(
            200,
          );
          await waitForItem(cancelled, { until: awaitingReport });
          expect((await call('POST', `/tasks/${cancelled}/cancel`, { apiKey: 'admin' })).status).toBe(200);
        },
      ),
      mapped('map-empty', [], 'fail'),
      mapped('map-fail', [item('map-fail', 'refuse'), item('map-fail', 'complete')], 'fail'),
    ]);
    expect([continued, reportedAndCancelled, empty, failed].map((map) => map.status)).toEqual([
      'completed',
      'completed',
      'completed',
      'failed',
    ]);
    expect(reportedAndCancelled.result).toMatchObject({
      results: [{ reported: true }, null, { tag: 'map-report', reply: 'complete' }],
      errors: [{ index: 1, status: 'cancelled' }],
    });

    return Promise.all(
      Object.entries(workflowIds).map(async ([name, workflowId]) => {
        const handle = client().workflow.getHandle(workflowId);
        // A refused scheduled run fails: its history is recorded all the same.
        await handle.result().catch(() => undefined);
        return { workflowId: name, history: await handle.fetchHistory() };
      }),
    );
  }

  it("replays the runs it starts now, and those earlier versions started, with today's workflow code", async () => {
    const fresh = await runScenarios();
    const recordTo = process.env.RECORD_HISTORIES;
    if (recordTo) {
      const folder = path.join(RECORDED, recordTo);
      fs.mkdirSync(folder, { recursive: true });
      for (const { workflowId, history } of fresh)
        fs.writeFileSync(path.join(folder, `${workflowId}.json`), historyText(history));
    }
    const recorded = recordedHistories();
    // A scenario added without recording it would guard nothing at the next change.
    expect(
      fresh
        .map(({ workflowId }) => workflowId)
        .filter((name) => !recorded.some(({ workflowId }) => workflowId.endsWith(`/${name}`))),
    ).toEqual([]);

    const results = await replayAll([...fresh, ...recorded]);
    expect(results).toHaveLength(fresh.length + recorded.length);
    expect(failuresOf(results)).toEqual([]);
  });

  it('replays every recorded run with the tracing interceptors in the workflow bundle: they add no commands', async () => {
    const recorded = recordedHistories();
    const results = await replayAll(recorded, TRACED);
    expect(results).toHaveLength(recorded.length);
    expect(failuresOf(results)).toEqual([]);
  });
});
