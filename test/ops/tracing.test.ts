import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { freePort } from '../../src/util/ports';
import { acceptsAndHearsCancel, completes, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { call } from '../support/http';
import { serviceEnv } from '../support/global-setup';
import { ServiceProcess } from '../support/service-process';
import { useMcpServer } from '../support/mcp-server';
import { waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { until } from '../support/until';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
}

/** An OTLP/HTTP receiver of JSON traces on loopback: the spans it got. */
class OtlpReceiver {
  readonly spans: Span[] = [];
  private readonly server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: Array<{ scopeSpans: Array<{ spans: Span[] }> }>;
        };
        for (const resource of body.resourceSpans)
          for (const scope of resource.scopeSpans) this.spans.push(...scope.spans);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  of(traceId: string): Span[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }
}

/** `span` and its ancestors among `spans`, the root first. */
function ancestorsOf(spans: Span[], span: Span): Span[] {
  const byId = new Map(spans.map((one) => [one.spanId, one]));
  const chain: Span[] = [];
  for (let at: Span | undefined = span; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined)
    chain.unshift(at);
  return chain;
}

/** The names of `span` and its ancestors among `spans`, the root first. */
const chainOf = (spans: Span[], span: Span): string[] => ancestorsOf(spans, span).map((one) => one.name);

/** W3C trace context: version, trace id, parent span id, flags (sampled). */
const traceparentOf = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;
const randomHex = (bytes: number) =>
  randomUUID()
    .replace(/-/g, '')
    .slice(0, bytes * 2);

/**
 * A service process (API and worker, on a task queue of its own: a task's whole trace is this
 * process's) tracing to an OTLP receiver in the test, started before the file's tests.
 */
function useTracedService(env: Record<string, string> = {}) {
  const receiver = new OtlpReceiver();
  let running: { service: ServiceProcess; baseUrl: string } | undefined;
  beforeAll(async () => {
    const stack = testStack();
    const endpoint = await receiver.start();
    const port = await freePort();
    const dataDir = fs.mkdtempSync(path.join(stack.runDir, 'tracing-'));
    const service = ServiceProcess.spawn(
      'start.ts',
      serviceEnv(stack, {
        PORT: String(port),
        DATA_DIR: dataDir,
        TEMPORAL_TASK_QUEUE: `tracing-${randomUUID()}`,
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        ...env,
      }),
      path.join(dataDir, 'service.log'),
    );
    running = { service, baseUrl: `http://127.0.0.1:${port}` };
    await service.waitReady(running.baseUrl);
  });
  afterAll(async () => {
    await running?.service.stop();
    await receiver.close();
  });
  return {
    receiver,
    started: () => {
      if (!running) throw new Error('useTracedService: the service runs only inside tests');
      return running;
    },
  };
}

describe('tracing with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  const server = useAgentServer();
  const mcp = useMcpServer({
    setup: (mcpServer) =>
      mcpServer.registerTool('traced', { description: 'Answers', inputSchema: {} }, () => ({
        content: [{ type: 'text', text: 'ok' }],
      })),
  });
  const traced = useTracedService();
  const receiver = traced.receiver;
  let service: ServiceProcess;
  let baseUrl: string;
  beforeAll(() => {
    ({ service, baseUrl } = traced.started());
  });

  it('follows one task from POST /tasks through its workflow and activity to the agent, and its callback', async () => {
    const agent = await registerAgent({
      mcpUrl: server().route('traced', completes({ text: 'ok' })),
      callbackUrl: server().route('traced-hook', () => ({ status: 204 })),
    });
    const [traceId, clientSpanId] = [randomHex(16), randomHex(8)];
    const started = await call('POST', '/tasks', {
      baseUrl,
      apiKey: 'admin',
      headers: { traceparent: traceparentOf(traceId, clientSpanId) },
      body: { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' } },
    });
    expect(started.status).toBe(202);
    const { taskId } = started.body as { taskId: string };
    expect(await waitForTask(taskId)).toMatchObject({ status: 'completed' });

    const [agentCall] = server().callsTo('traced');
    const [callback] = await until(
      () => server().callsTo('traced-hook').length > 0 && server().callsTo('traced-hook'),
      'the callback',
    );
    for (const received of [agentCall, callback])
      expect(received.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    // The spans of the request, the workflow, its activities and the calls out, all in the caller's trace.
    // The workflow's span ends, and is exported, only once the workflow does: after the callback.
    const spans = await until(() => {
      const found = receiver.of(traceId);
      const ids = new Set(found.map((span) => span.spanId));
      const linked = found.every((span) => span.parentSpanId === clientSpanId || ids.has(span.parentSpanId ?? ''));
      return linked && found.some((span) => span.name.startsWith('RunWorkflow:')) && found;
    }, 'the spans of the whole task, each with its parent');
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const serverSpan = spans.find((span) => span.name === 'POST /tasks' && span.kind === 2);
    expect(serverSpan?.parentSpanId).toBe(clientSpanId);
    // The agent's call: an undici client span whose id the agent got as its parent.
    const agentParent = agentCall.headers.traceparent!.toString().split('-')[2];
    const callSpan = byId.get(agentParent);
    expect(callSpan).toBeDefined();
    expect(chainOf(spans, callSpan!)).toEqual([
      'POST /tasks',
      'router - /tasks',
      expect.stringMatching(/^StartWorkflow:/),
      expect.stringMatching(/^RunWorkflow:/),
      expect.stringMatching(/^StartActivity:callAgent/),
      expect.stringMatching(/^RunActivity:callAgent/),
      callSpan!.name,
    ]);
    expect(chainOf(spans, serverSpan!)[0]).toBe('POST /tasks');
    // MongoDB's commands are in the trace too (the task's insert among them).
    expect(spans.some((span) => span.name.startsWith('mongodb.'))).toBe(true);
    // And the service's log line of the task names the trace.
    const startLines = fs
      .readFileSync(service.logFile, 'utf8')
      .split('\n')
      .filter((line) => line.includes(taskId) && line.includes('task started'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(startLines).toEqual([expect.objectContaining({ taskId, traceId })]);
  });

  it("puts an agent's report and a cancellation in the trace of the request that sent each", async () => {
    const agent = await registerAgent({ mcpUrl: server().route('traced-later', acceptsAndHearsCancel) });
    const start = async () => {
      const started = await call('POST', '/tasks', {
        baseUrl,
        apiKey: 'admin',
        body: { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' } },
      });
      expect(started.status).toBe(202);
      return (started.body as { taskId: string }).taskId;
    };
    /** POSTs in a trace of its own; the names from the request's span down to the workflow's `last`, once all arrived. */
    const tracedPost = async (route: string, apiKey: string, body: unknown, last: string) => {
      const [traceId, clientSpanId] = [randomHex(16), randomHex(8)];
      const reply = await call('POST', route, {
        baseUrl,
        apiKey,
        headers: { traceparent: traceparentOf(traceId, clientSpanId) },
        body,
      });
      expect(reply.status).toBeLessThan(300);
      // The request's own spans end after the workflow's may have been exported.
      return until(() => {
        const spans = receiver.of(traceId);
        const lastSpan = spans.find((span) => span.name === last);
        const chain = lastSpan ? ancestorsOf(spans, lastSpan) : [];
        return chain[0]?.parentSpanId === clientSpanId && chain.map((span) => span.name);
      }, `${last} and the spans above it`);
    };

    const reported = await start();
    await until(() => server().callsTo('traced-later').length > 0, 'the call');
    const report = { status: 'completed', result: { text: 'later' } };
    expect(await tracedPost(`/tasks/${reported}/result`, agent.apiKey, report, 'HandleSignal:agentReport')).toEqual([
      'POST /tasks/:taskId/result',
      'router - /tasks/:taskId/result',
      'SignalWorkflow:agentReport',
      'HandleSignal:agentReport',
    ]);

    const cancelled = await start();
    await until(() => server().callsTo('traced-later').length > 1, 'the second call');
    expect(await tracedPost(`/tasks/${cancelled}/cancel`, 'admin', undefined, 'HandleUpdate:cancelTask')).toEqual([
      'POST /tasks/:taskId/cancel',
      'router - /tasks/:taskId/cancel',
      'StartWorkflowUpdate:cancelTask',
      'HandleUpdate:cancelTask',
    ]);
  });

  it("carries the trace to an MCP server's tools/call", async () => {
    const agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
    const traceId = randomHex(16);
    const started = await call('POST', '/tasks', {
      baseUrl,
      apiKey: 'admin',
      headers: { traceparent: traceparentOf(traceId, randomHex(8)) },
      body: { agentId: agent.agentId, operation: 'tools/traced', params: {} },
    });
    expect(await waitForTask((started.body as { taskId: string }).taskId)).toMatchObject({ status: 'completed' });
    const [toolCall] = mcp().callsOf('tools/call');
    expect(toolCall.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });
});

describe('tracing with OTEL_NODE_DISABLED_INSTRUMENTATIONS', () => {
  const server = useAgentServer();
  const traced = useTracedService({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'mongodb, koa' });

  it('leaves out the spans of the instrumentations named, and keeps the others', async () => {
    const { baseUrl } = traced.started();
    const agent = await registerAgent({ mcpUrl: server().route('partly-traced', completes({})) });
    const traceId = randomHex(16);
    const started = await call('POST', '/tasks', {
      baseUrl,
      apiKey: 'admin',
      headers: { traceparent: traceparentOf(traceId, randomHex(8)) },
      body: { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' } },
    });
    expect(await waitForTask((started.body as { taskId: string }).taskId)).toMatchObject({ status: 'completed' });
    const spans = await until(() => {
      const found = traced.receiver.of(traceId);
      return found.some((span) => span.name.startsWith('RunActivity:callAgent')) && found;
    }, 'the spans of the task');
    // Without Koa's instrumentation the request's span has no route to be named after.
    expect(spans.filter((span) => span.kind === 2).map((span) => span.name)).toEqual(['POST']);
    expect(spans.map((span) => span.name).filter((name) => /^(mongodb\.|router - )/.test(name))).toEqual([]);
  });
});

describe('tracing without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  const server = useAgentServer();

  it('sends agents no traceparent', async () => {
    const agent = await registerAgent({ mcpUrl: server().route('untraced', completes({})) });
    const started = await call('POST', '/tasks', {
      apiKey: 'admin',
      headers: { traceparent: traceparentOf(randomHex(16), randomHex(8)) },
      body: { agentId: agent.agentId, operation: 'tools/echo', params: { text: 'x' } },
    });
    expect(await waitForTask((started.body as { taskId: string }).taskId)).toMatchObject({ status: 'completed' });
    expect(server().callsTo('untraced')[0].headers.traceparent).toBeUndefined();
  });
});
