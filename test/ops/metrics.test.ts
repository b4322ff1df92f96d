import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { accepts, completes, useAgentServer, type AgentBehaviour } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { EventStreamReader } from '../support/event-stream';
import { declaredFamilies, scrape, valueOf, type Sample } from '../support/prometheus';
import { RoomClient, createRoom, isMessage } from '../support/room-client';
import { serviceEnv } from '../support/global-setup';
import { useSecondApi } from '../support/second-api';
import { ServiceProcess } from '../support/service-process';
import { reportOn, startTask, tool, waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { newUserId } from '../support/humans';
import { useMcpServer } from '../support/mcp-server';
import { until } from '../support/until';

/** The MCP server's tool, named for this file alone. */
const MCP_TOOL = `m_${randomUUID().slice(0, 8)}`;

/**
 * The domain metrics of GET /metrics, read off the service under test. Each test's tasks run on an
 * operation of their own, so the counts labelled with it are this test's alone while other files
 * run beside it; metrics without such a label are read as a difference, or on a process of their own.
 */
describe('GET /metrics', () => {
  const server = useAgentServer();
  const secondApi = useSecondApi('metrics');
  const mcp = useMcpServer({
    setup: (server) => {
      server.registerTool(MCP_TOOL, { description: 'Answers', inputSchema: {} }, () => ({
        content: [{ type: 'text', text: 'ok' }],
      }));
      server.registerTool(`${MCP_TOOL}_refuses`, { description: 'Fails', inputSchema: {} }, () => ({
        isError: true,
        content: [{ type: 'text', text: 'no' }],
      }));
    },
  });

  /** An agent with one tool of its own, answering with `behaviour`: its operation labels this test's samples. */
  async function agentAnswering(
    behaviour: AgentBehaviour,
  ): Promise<{ agentId: string; apiKey: string; operation: string }> {
    const name = `m_${randomUUID().slice(0, 8)}`;
    const agent = await registerAgent({
      mcpUrl: server().route(name, behaviour),
      capabilities: { tools: [tool(name, { text: { type: 'string' } })] },
    });
    return { agentId: agent.agentId, apiKey: agent.apiKey, operation: `tools/${name}` };
  }

  /** Scrapes until `ready` holds: the worker records an end right after the task store shows it. */
  async function samplesWhen(ready: (samples: Sample[]) => boolean, baseUrl?: string): Promise<Sample[]> {
    return until(async () => {
      const { samples } = await scrape(baseUrl);
      return ready(samples) && samples;
    }, 'the expected samples in GET /metrics');
  }

  it('counts a task created, its call (first attempt, 2xx) and its end', async () => {
    const { agentId, operation } = await agentAnswering(completes({ text: 'ok' }));
    const taskId = await startTask({ agentId, operation, params: { text: 'x' } });
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed' });

    const samples = await samplesWhen((s) => valueOf(s, 'acs_tasks_ended_total', { operation }) === 1);
    expect(valueOf(samples, 'acs_tasks_created_total', { operation, kind: 'task' })).toBe(1);
    expect(valueOf(samples, 'acs_tasks_ended_total', { operation, status: 'completed', code: '' })).toBe(1);
    expect(valueOf(samples, 'acs_agent_call_attempts_total', { operation, attempt: 'first' })).toBe(1);
    expect(valueOf(samples, 'acs_agent_call_attempts_total', { operation, attempt: 'retry' })).toBe(0);
    expect(
      valueOf(samples, 'acs_agent_call_duration_seconds_count', { operation, protocol: 'acs', outcome: '2xx' }),
    ).toBe(1);
    expect(valueOf(samples, 'acs_agent_call_duration_seconds_sum', { operation })).toBeGreaterThan(0);
  });

  it("counts a retried call by its status class, and a refused one's end by its error code", async () => {
    let calls = 0;
    const flaky = await agentAnswering(() =>
      (calls += 1) === 1 ? { status: 503, body: 'busy' } : { status: 200, body: { status: 'completed', result: {} } },
    );
    const refusing = await agentAnswering(() => ({ status: 404, body: 'no such tool' }));
    const retried = await startTask({ agentId: flaky.agentId, operation: flaky.operation, params: { text: 'x' } });
    const refused = await startTask({
      agentId: refusing.agentId,
      operation: refusing.operation,
      params: { text: 'x' },
    });
    expect(await waitForTask(retried)).toMatchObject({ status: 'completed' });
    const failed = await waitForTask(refused);
    expect(failed).toMatchObject({ status: 'failed' });

    const samples = await samplesWhen(
      (s) =>
        valueOf(s, 'acs_tasks_ended_total', { operation: flaky.operation }) === 1 &&
        valueOf(s, 'acs_tasks_ended_total', { operation: refusing.operation }) === 1,
    );
    const retriedCalls = { operation: flaky.operation, protocol: 'acs' };
    expect(valueOf(samples, 'acs_agent_call_attempts_total', { operation: flaky.operation, attempt: 'retry' })).toBe(1);
    expect(valueOf(samples, 'acs_agent_call_duration_seconds_count', { ...retriedCalls, outcome: '5xx' })).toBe(1);
    expect(valueOf(samples, 'acs_agent_call_duration_seconds_count', { ...retriedCalls, outcome: '2xx' })).toBe(1);
    expect(
      valueOf(samples, 'acs_agent_call_duration_seconds_count', { operation: refusing.operation, outcome: '4xx' }),
    ).toBe(1);
    expect(
      valueOf(samples, 'acs_tasks_ended_total', {
        operation: refusing.operation,
        status: 'failed',
        code: failed.error.code,
      }),
    ).toBe(1);
  });

  it("measures the wait from an agent's 202 to its report, and from an input request to its answer", async () => {
    const { agentId, apiKey, operation } = await agentAnswering(accepts);
    const taskId = await startTask({ agentId, operation, params: { text: 'x' } });
    await waitForTask(taskId, { until: (task) => task.phase === 'awaiting_agent_report' });
    expect((await reportOn(taskId, apiKey, { status: 'input-required', message: 'Go on?' })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await call('POST', `/tasks/${taskId}/input`, { apiKey: 'admin', body: { input: true } })).status).toBe(200);
    expect((await reportOn(taskId, apiKey, { status: 'completed', result: { done: true } })).status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed' });

    const samples = await samplesWhen((s) => valueOf(s, 'acs_report_wait_seconds_count', { operation }) === 1);
    expect(valueOf(samples, 'acs_report_wait_seconds_count', { operation, outcome: 'completed' })).toBe(1);
    expect(valueOf(samples, 'acs_report_wait_seconds_sum', { operation })).toBeGreaterThan(0.05);
    expect(valueOf(samples, 'acs_input_requests_total', { operation })).toBe(1);
    expect(valueOf(samples, 'acs_input_wait_seconds_count', { operation })).toBe(1);
    expect(valueOf(samples, 'acs_input_wait_seconds_sum', { operation })).toBeGreaterThan(0.04);
  });

  it('counts a composition by its size, callbacks delivered and given up, and idempotent repeats', async () => {
    const { agentId, operation } = await agentAnswering(completes({ text: 'ok' }));
    const before = (await scrape()).samples;
    const step = (parents: string[] = []) => ({
      agentId,
      operation,
      params: { text: 'x' },
      ...(parents.length > 0 ? { parents } : {}),
    });
    const composed = await call('POST', '/tasks/compose', {
      apiKey: 'admin',
      body: [step(), step(['0']), step(['0'])],
    });
    expect(composed.status).toBe(202);
    const delivered = await startTask({
      agentId,
      operation,
      params: { text: 'x' },
      callbackUrl: server().route(`hook-${randomUUID()}`, () => ({ status: 204 })),
    });
    const refused = await startTask({
      agentId,
      operation,
      params: { text: 'x' },
      callbackUrl: server().route(`gone-${randomUUID()}`, () => ({ status: 410, body: 'gone' })),
    });
    const key = randomUUID();
    const body = { agentId, operation, params: { text: 'once' } };
    const first = await call('POST', '/tasks', { apiKey: 'admin', body, headers: { 'idempotency-key': key } });
    const repeat = await call('POST', '/tasks', { apiKey: 'admin', body, headers: { 'idempotency-key': key } });
    expect(repeat.body.taskId).toBe(first.body.taskId);
    const conflict = await call('POST', '/tasks', {
      apiKey: 'admin',
      body: { ...body, params: { text: 'twice' } },
      headers: { 'idempotency-key': key },
    });
    expect(conflict.status).toBe(409);
    for (const taskId of [delivered, refused]) await waitForTask(taskId);

    const grew = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
      valueOf(samples, name, labels) - valueOf(before, name, labels);
    const samples = await samplesWhen(
      (s) =>
        grew(s, 'acs_callback_deliveries_total', { outcome: 'delivered' }) >= 1 &&
        grew(s, 'acs_callback_deliveries_total', { outcome: 'given_up' }) >= 1,
    );
    expect(valueOf(samples, 'acs_tasks_created_total', { operation, kind: 'composition' })).toBe(3);
    expect(valueOf(samples, 'acs_tasks_created_total', { operation, kind: 'task' })).toBe(3);
    expect(grew(samples, 'acs_composition_size_count')).toBeGreaterThanOrEqual(1);
    expect(grew(samples, 'acs_composition_size_bucket', { le: '2' })).toBeLessThan(
      grew(samples, 'acs_composition_size_bucket', { le: '3' }),
    );
    expect(grew(samples, 'acs_idempotency_hits_total', { outcome: 'replayed' })).toBeGreaterThanOrEqual(1);
    expect(grew(samples, 'acs_idempotency_hits_total', { outcome: 'conflict' })).toBeGreaterThanOrEqual(1);
  });

  it("counts an MCP server's answer as 2xx and its tool error by the task's code, under protocol mcp", async () => {
    const agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
    const [answered, toolError] = [`tools/${MCP_TOOL}`, `tools/${MCP_TOOL}_refuses`];
    const answeredTask = await startTask({ agentId: agent.agentId, operation: answered, params: {} });
    const refusedTask = await startTask({ agentId: agent.agentId, operation: toolError, params: {} });
    expect(await waitForTask(answeredTask)).toMatchObject({ status: 'completed' });
    const failed = await waitForTask(refusedTask);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'AGENT_TOOL_ERROR' } });

    const samples = await samplesWhen(
      (s) =>
        valueOf(s, 'acs_tasks_ended_total', { operation: answered }) === 1 &&
        valueOf(s, 'acs_tasks_ended_total', { operation: toolError }) === 1,
    );
    for (const operation of [answered, toolError])
      expect(
        valueOf(samples, 'acs_agent_call_duration_seconds_count', { operation, protocol: 'mcp', outcome: '2xx' }),
      ).toBe(1);
    expect(
      valueOf(samples, 'acs_tasks_ended_total', { operation: toolError, status: 'failed', code: 'AGENT_TOOL_ERROR' }),
    ).toBe(1);
  });

  it("includes the Temporal SDK's worker metrics: task slots, schedule-to-start latency, sticky cache, polls", async () => {
    const { agentId, operation } = await agentAnswering(completes({}));
    await waitForTask(await startTask({ agentId, operation, params: { text: 'x' } }));
    const { text } = await scrape();
    const families = declaredFamilies(text);
    for (const name of [
      'temporal_worker_task_slots_available',
      'temporal_workflow_task_schedule_to_start_latency',
      'temporal_activity_schedule_to_start_latency',
      'temporal_sticky_cache_size',
      'temporal_workflow_task_queue_poll_succeed_total',
    ])
      expect([name, families.get(name)]).toEqual([name, expect.any(String)]);
  });

  it('counts room sockets, joins, leaves, messages stored and delivered, and open event streams, on their process', async () => {
    const baseUrl = secondApi();
    const room = await createRoom();
    const wsUrl = baseUrl.replace('http', 'ws');
    const writer = await RoomClient.connect(room.roomId, { human: newUserId() }, { wsUrl });
    let samples = await samplesWhen((s) => valueOf(s, 'acs_room_sockets_open') === 1, baseUrl);
    expect(valueOf(samples, 'acs_room_joins_total')).toBe(1);
    writer.sendMessage('counted');
    await writer.waitFor(isMessage('counted'));
    const { agentId, operation } = await agentAnswering(accepts);
    const taskId = await startTask({ agentId, operation, params: { text: 'x' } });
    const stream = await EventStreamReader.open(`/tasks/${taskId}/events`, { baseUrl });

    samples = await samplesWhen((s) => valueOf(s, 'acs_event_streams_open') === 1, baseUrl);
    expect(valueOf(samples, 'acs_room_messages_stored_total')).toBe(1);
    expect(valueOf(samples, 'acs_room_deliveries_total')).toBe(1);
    await writer.close();
    stream.disconnect();
    samples = await samplesWhen(
      (s) => valueOf(s, 'acs_room_sockets_open') === 0 && valueOf(s, 'acs_event_streams_open') === 0,
      baseUrl,
    );
    expect(valueOf(samples, 'acs_room_leaves_total')).toBe(1);
    await call('POST', `/tasks/${taskId}/cancel`, { apiKey: 'admin' });
  });

  it('is served by a worker-only process on METRICS_PORT, with its agent calls and Temporal worker metrics', async () => {
    const stack = testStack();
    const dataDir = fs.mkdtempSync(path.join(stack.runDir, 'metrics-worker-'));
    const worker = ServiceProcess.spawn(
      'worker.ts',
      // A queue of its own: the shared queue's tasks stay with the stack's worker.
      serviceEnv(stack, { DATA_DIR: dataDir, TEMPORAL_TASK_QUEUE: `metrics-${randomUUID()}` }),
      path.join(dataDir, 'service.log'),
    );
    try {
      await worker.waitForLog('metrics served');
      const url = /"url":"(http:\/\/[^"]+)\/metrics"/.exec(fs.readFileSync(worker.logFile, 'utf8'))![1];
      const { text } = await scrape(url);
      const families = declaredFamilies(text);
      expect(families.get('acs_agent_call_duration_seconds')).toBe('histogram');
      expect(families.get('acs_tasks_ended_total')).toBe('counter');
      expect(families.get('temporal_worker_task_slots_available')).toBe('gauge');
      expect((await call('GET', '/healthz', { baseUrl: url })).status).toBe(200);
      expect((await call('GET', '/tasks', { baseUrl: url, apiKey: 'admin' })).status).toBe(404);
    } finally {
      await worker.stop();
    }
  });
});
