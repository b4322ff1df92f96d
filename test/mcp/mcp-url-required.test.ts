import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { registerAgent, type RegisteredAgent } from '../support/agents';
import { EventStreamReader } from '../support/event-stream';
import { call } from '../support/http';
import { useMcpServer } from '../support/mcp-server';
import { startTask, waitForTask } from '../support/tasks';

/** Fast retries: a call that got -32042 must not be retried, and a test would see it quickly. */
const QUICK_RETRY = { maxAttempts: 3, initialIntervalMs: 100, backoffCoefficient: 1, maxIntervalMs: 100 };

const consentUrl = (account: string) => `https://calendar.example/consent?account=${account}`;

/**
 * Tools that answer URLElicitationRequiredError (-32042) until the consent is given: `calendar`
 * needs one consent per account, given when it is asked for the second time (the person went to the
 * page meanwhile); `stubborn` always needs another; `local` names a page a browser would read from disk.
 */
function tools(server: McpServer, consented: Set<string>): void {
  server.registerTool(
    'calendar',
    { description: "Reads an account's calendar once the account consented", inputSchema: { account: z.string() } },
    ({ account }) => {
      if (!consented.has(account)) {
        consented.add(account);
        throw new UrlElicitationRequiredError([
          {
            mode: 'url',
            elicitationId: `consent-${account}`,
            url: consentUrl(account),
            message: `Allow access to the calendar of ${account}`,
          },
        ]);
      }
      return { content: [{ type: 'text', text: `calendar of ${account}: empty` }] };
    },
  );
  let asked = 0;
  server.registerTool('stubborn', { description: 'Always needs another consent' }, () => {
    asked += 1;
    throw new UrlElicitationRequiredError([
      { mode: 'url', elicitationId: `again-${asked}`, url: consentUrl(`again-${asked}`), message: 'Once more' },
    ]);
  });
  server.registerTool('local', { description: 'Names a local file as its page' }, () => {
    throw new UrlElicitationRequiredError([
      { mode: 'url', elicitationId: 'local', url: 'file:///etc/passwd', message: 'Open this file' },
    ]);
  });
}

/** A person's answer to the task's open input request. */
const giveInput = (taskId: string, input: unknown) =>
  call('POST', `/tasks/${taskId}/input`, { apiKey: 'admin', body: { input } });

/** Waits until the task asks for input, or ends (so that a task that never asks fails the test at once). */
const untilAskedOrEnded = (taskId: string) =>
  waitForTask(taskId, {
    until: (task) => ['input-required', 'completed', 'failed', 'cancelled'].includes(task.status),
  });

describe('an MCP agent that answers a call with URLElicitationRequiredError (-32042)', () => {
  const consented = new Set<string>();
  const mcp = useMcpServer({ setup: (server) => tools(server, consented) });
  let agent: RegisteredAgent;

  beforeAll(async () => {
    agent = await registerAgent({ protocol: 'mcp', mcpUrl: mcp().url, capabilities: undefined });
  });

  const run = (operation: string, params: Record<string, unknown> = {}) =>
    startTask({ agentId: agent.agentId, operation, params, retry: QUICK_RETRY });
  const callsOf = (tool: string) => mcp().requests.filter((request) => request.toolName === tool).length;

  it('relays the URL to a person, and once confirmed calls the tool again in the same attempt', async () => {
    const taskId = await run('tools/calendar', { account: 'ada' });
    const stream = await EventStreamReader.open(`/tasks/${taskId}/events`);
    const waiting = await untilAskedOrEnded(taskId);
    expect(waiting).toMatchObject({
      status: 'input-required',
      inputRequest: {
        message: 'Allow access to the calendar of ada',
        url: consentUrl('ada'),
        inputSchema: { required: ['action'] },
      },
    });
    expect((await giveInput(taskId, { action: 'accept' })).status).toBe(200);
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'calendar of ada: empty' }] },
      attempts: 1,
    });
    expect(callsOf('calendar')).toBe(2);
    await stream.closed;
    // No attempt failed: the call went on after the confirmation.
    const types = stream.data.map((event) => event.type);
    expect(types.join(' ')).toBe('created started input_required input_received completed');
  });

  it('fails the task AGENT_REJECTED, without calling again, when the person declines', async () => {
    const taskId = await run('tools/calendar', { account: 'bob' });
    expect(await untilAskedOrEnded(taskId)).toMatchObject({
      status: 'input-required',
      inputRequest: { url: consentUrl('bob') },
    });
    const before = callsOf('calendar');
    expect((await giveInput(taskId, { action: 'decline' })).status).toBe(200);
    const task = await waitForTask(taskId);
    expect(task).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: {
        code: 'AGENT_REJECTED',
        message: expect.stringContaining('declined'),
        details: { code: -32042, data: { elicitations: [{ elicitationId: 'consent-bob', url: consentUrl('bob') }] } },
      },
    });
    expect(task.error.message).toContain(consentUrl('bob'));
    expect(callsOf('calendar')).toBe(before);
  });

  it('fails the task after three rounds of -32042, each confirmed, naming the reason', async () => {
    const taskId = await run('tools/stubborn');
    for (let round = 1; round <= 3; round += 1) {
      const waiting = await untilAskedOrEnded(taskId);
      expect(waiting).toMatchObject({ status: 'input-required', inputRequest: { url: consentUrl(`again-${round}`) } });
      expect((await giveInput(taskId, { action: 'accept' })).status).toBe(200);
      await waitForTask(taskId, { until: (task) => task.inputRequest?.url !== consentUrl(`again-${round}`) });
    }
    expect(await waitForTask(taskId)).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'AGENT_REJECTED', message: expect.stringContaining('after 3 rounds'), details: { code: -32042 } },
    });
    expect(callsOf('stubborn')).toBe(4);
  });

  it('fails the task without asking anyone when the page is not http or https', async () => {
    const taskId = await run('tools/local');
    const stream = await EventStreamReader.open(`/tasks/${taskId}/events`);
    expect(await untilAskedOrEnded(taskId)).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'AGENT_REJECTED', message: expect.stringContaining('not http or https') },
    });
    await stream.closed;
    expect(stream.data.map((event) => event.type)).not.toContain('input_required');
    expect(callsOf('local')).toBe(1);
  });
});
