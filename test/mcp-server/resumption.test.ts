import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { freePort } from '../../src/util/ports';
import { accepts, useAgentServer } from '../support/agent-server';
import { registerAgent } from '../support/agents';
import { serviceEnv } from '../support/global-setup';
import { useSecondApi } from '../support/second-api';
import { ServiceProcess } from '../support/service-process';
import { reportOn, tool, waitForTask } from '../support/tasks';
import { testStack } from '../support/test-stack';
import { until } from '../support/until';
import { eventsOf, inSession, openSession } from '../support/mcp-raw';

describe("a tools/call stream resumed with Last-Event-ID, from the task's event log", () => {
  const server = useAgentServer();
  const second = useSecondApi('mcp-resume');

  it('goes on at another API process from the event the client saw last, and ends with the answer', async () => {
    const name = `Resumable ${randomUUID().slice(0, 6)}`;
    const agent = await registerAgent({
      name,
      mcpUrl: server().route('resume-raw', accepts),
      capabilities: { tools: [tool('work')] },
    });
    const { baseUrl } = testStack();
    const sessionId = await openSession(baseUrl);
    const cut = new AbortController();
    const posted = await fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      signal: cut.signal,
      headers: inSession(sessionId, {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      }),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'call-1',
        method: 'tools/call',
        params: { name: `${name.replace(' ', '_')}.work`, arguments: {}, _meta: { progressToken: 'p1' } },
      }),
    });
    expect(posted.headers.get('content-type')).toContain('text/event-stream');
    // The stream's first event: its priming id, before the task has anything to say.
    const reader = posted.body!.getReader();
    let seen = '';
    while (!/^id: /m.test(seen)) seen += new TextDecoder().decode((await reader.read()).value);
    const primed = eventsOf(seen)[0].id!;
    cut.abort();

    const taskId = await until(() => server().callsTo('resume-raw')[0]?.body?.taskId as string | undefined, 'the call');
    expect(
      (await reportOn(taskId, agent.apiKey, { status: 'pending', progress: 0.25, message: 'a quarter' })).status,
    ).toBe(200);
    expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { done: 1 } })).status).toBe(200);
    await waitForTask(taskId);

    const resumed = await fetch(`${second()}/mcp`, {
      headers: inSession(sessionId, { accept: 'text/event-stream', 'last-event-id': primed }),
    });
    expect(resumed.status).toBe(200);
    const events = eventsOf(await resumed.text());
    expect(events.map((event) => event.data)).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'p1', progress: 25, total: 100, message: 'a quarter' },
      },
      {
        jsonrpc: '2.0',
        id: 'call-1',
        result: expect.objectContaining({ structuredContent: { done: 1 } }),
      },
    ]);
    // Resumed again from the progress event: only the answer is left.
    const again = await fetch(`${baseUrl}/mcp`, {
      headers: inSession(sessionId, { accept: 'text/event-stream', 'last-event-id': events[0].id! }),
    });
    expect(eventsOf(await again.text()).map((event) => event.data.id)).toEqual(['call-1']);

    const stranger = await fetch(`${baseUrl}/mcp`, {
      headers: {
        ...inSession(sessionId, { accept: 'text/event-stream', 'last-event-id': primed }),
        'x-api-key': agent.apiKey,
      },
    });
    expect(stranger.status).toBe(404);
    const sessionless = await fetch(`${baseUrl}/mcp`, {
      headers: { 'x-api-key': testStack().adminKey, accept: 'text/event-stream' },
    });
    expect(sessionless.status).toBe(405);
  });

  it("answers the SDK client's call after its API process was killed with SIGKILL mid-call and started again", async () => {
    const name = `Crash ${randomUUID().slice(0, 6)}`;
    const agent = await registerAgent({
      name,
      mcpUrl: server().route('resume-crash', accepts),
      capabilities: { tools: [tool('work')] },
    });
    const stack = testStack();
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const env = serviceEnv(stack, { PORT: String(port) });
    const logFile = path.join(stack.runDir, `mcp-crash-${port}.log`);
    let api = ServiceProcess.spawn('server.ts', env, logFile);
    try {
      await api.waitReady(baseUrl);
      const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
        requestInit: { headers: { 'x-api-key': stack.adminKey } },
        reconnectionOptions: {
          initialReconnectionDelay: 500,
          maxReconnectionDelay: 2_000,
          reconnectionDelayGrowFactor: 1.5,
          maxRetries: 60,
        },
      });
      const client = new Client({ name: 'crash-test', version: '1.0.0' });
      await client.connect(transport);
      const progress: Progress[] = [];
      const calling = client.callTool({ name: `${name.replace(' ', '_')}.work`, arguments: {} }, undefined, {
        onprogress: (each) => progress.push(each),
        timeout: 120_000,
      });
      const taskId = await until(
        () => server().callsTo('resume-crash')[0]?.body?.taskId as string | undefined,
        'the call',
      );
      await api.stop('SIGKILL');
      expect((await reportOn(taskId, agent.apiKey, { status: 'pending', progress: 0.5, message: 'half' })).status).toBe(
        200,
      );
      api = ServiceProcess.spawn('server.ts', env, logFile);
      await api.waitReady(baseUrl);
      expect((await reportOn(taskId, agent.apiKey, { status: 'completed', result: { survived: true } })).status).toBe(
        200,
      );
      const result = (await calling) as CallToolResult;
      expect(result.structuredContent).toEqual({ survived: true });
      expect(progress).toEqual([expect.objectContaining({ progress: 50, message: 'half' })]);
      await client.close();
    } finally {
      await api.stop();
    }
  });
});
